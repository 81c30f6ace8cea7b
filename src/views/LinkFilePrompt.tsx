// A share link's file prompt: the link names a file too large to travel in it, by its hash. A file
// chosen for it is hashed first; one that is not the link's is named beside the link's (names and
// sizes), and nothing opens until the user says how: under the link's settings anyway, as recorded,
// or another file.
import { useShallow } from 'zustand/react/shallow';
import { formatSize } from '../allocator/format-size';
import { useSession, type Awaiting } from '../state/session-store';
import { FileButton } from './FileButton';

export function LinkFilePrompt({ awaiting }: { awaiting: Awaiting }) {
  const { chooseFile, openChosenInstead } = useSession(useShallow((s) => ({ chooseFile: s.chooseFile, openChosenInstead: s.openChosenInstead })));
  // Links from before they carried the size name the file alone.
  const linkSize = awaiting.size !== undefined ? ` (${formatSize(awaiting.size)})` : '';
  const other = awaiting.chosenInstead;
  if (other) {
    return (
      <>
        <p>
          <b>{other.name}</b> ({formatSize(other.size)}) is not the file this link names: it names <b>{awaiting.name}</b>
          {linkSize}. Nothing is open yet.
        </p>
        <p className="choices">
          <button onClick={() => void openChosenInstead('link')}>Open {other.name} under the link's settings</button>{' '}
          <button onClick={() => void openChosenInstead('recorded')}>Open it as recorded</button>{' '}
          <FileButton label="Choose again…" onFiles={([file]) => void chooseFile(file!)} />
        </p>
      </>
    );
  }
  return (
    <>
      <p>
        This link shows <b>{awaiting.name}</b>
        {linkSize}, which is too large to travel inside a link. Open that file to see the view it shares (it never leaves this machine); nothing
        else is shown meanwhile.
      </p>
      {awaiting.checking && <p>Checking that {awaiting.checking} is that file…</p>}
      <FileButton label={`Open ${awaiting.name}…`} onFiles={([file]) => void chooseFile(file!)} />
    </>
  );
}
