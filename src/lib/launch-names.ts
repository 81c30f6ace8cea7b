// Where a launched page finds its snapshot: names the CLI writes (splitscope report, splitscope open)
// and the page reads (state/launch-file.ts), in one place because both must agree.

/** The element a report keeps its snapshot in: base64 text, the file's name and config as attributes. */
export const REPORT_SNAPSHOT_ID = 'splitscope-snapshot';
/** Where `splitscope open` serves its file, below the page's base. */
export const OPEN_PATH = '__open__/';
