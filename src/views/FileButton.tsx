// A file input styled as a button, for snapshots: the formats splitscope reads, the choice handed
// over as a list, and the input cleared after each choice, so that choosing the same file again
// opens it again.

/** What a snapshot file's name ends in. */
const SNAPSHOT_ACCEPT = '.pickle,.gz,.json,.pkl';

export function FileButton({ label, multiple = false, directory = false, also = '', onFiles }: {
  label: string;
  /** More names it takes beside snapshots' (".jsonl"). */
  also?: string;
  multiple?: boolean;
  /** Choose a folder (every file in it); the files are filtered by the caller. */
  directory?: boolean;
  onFiles: (files: File[]) => void;
}) {
  return (
    <label className="file">
      {label}
      <input
        type="file"
        multiple={multiple}
        {...(directory ? ({ webkitdirectory: '' } as object) : { accept: also ? `${SNAPSHOT_ACCEPT},${also}` : SNAPSHOT_ACCEPT })}
        onChange={(e) => {
          if (e.target.files?.length) onFiles([...e.target.files]);
          e.target.value = '';
        }}
      />
    </label>
  );
}
