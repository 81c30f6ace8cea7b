// A typed error for problems the user can cause with a file they open (a cut-off download,
// a pickle that would run code, JSON of the wrong shape). The page shows `message` as is,
// so every message says what was wrong and what to do about it.

export type ImportErrorCode =
  /** The input ends before the pickle (or an operand inside it) does. */
  | 'truncated'
  /** The pickle would import or call Python code (GLOBAL, REDUCE, ...). */
  | 'unsafe-opcode'
  /** An unknown opcode byte, or a known one used in a way the pickle machine forbids. */
  | 'bad-opcode'
  /** Containers nested deeper than the reader allows. */
  | 'too-deep'
  /** Parsed fine, but a field has the wrong type or is missing. */
  | 'bad-shape'
  /** Over a size limit (decompressed size, string length). */
  | 'too-large'
  /** Neither a pickle nor JSON, or a pickle/JSON that is not a memory snapshot. */
  | 'not-a-snapshot'
  | 'bad-json'
  | 'bad-gzip';

export class ImportError extends Error {
  override readonly name = 'ImportError';
  readonly code: ImportErrorCode;
  /** Byte offset in the (decompressed) input where the problem was found, when known. */
  readonly offset: number | undefined;

  constructor(code: ImportErrorCode, message: string, offset?: number) {
    super(message);
    this.code = code;
    this.offset = offset;
  }
}
