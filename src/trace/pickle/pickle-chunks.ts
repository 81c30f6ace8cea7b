// A pickle that arrives in chunks of any size (a File's stream, an inflater's output), read as it
// comes: the chunks are gathered into windows of WINDOW_BYTES or more for the reader (which stops
// within WINDOW_MARGIN of a window's end and goes on in the next), so the input is never held whole.
// A 1 GB snapshot then costs a window, not a gigabyte, beside what is read from it.
import { concatBytes } from '../../lib/concat-bytes';
import { PickleReader, windowMargin, type ReadPickleOptions } from './pickle-reader';
import type { PickleValue } from './pickle-value';

/** A window's least size: large enough that the bytes a window carries over are few. */
const WINDOW_BYTES = 8 << 20;

export interface PickleChunkOptions extends ReadPickleOptions {
  /** A window's least size (default WINDOW_BYTES; tests make it small, with a small windowMargin). */
  windowBytes?: number;
}

export class PickleChunkReader {
  private readonly reader: PickleReader;
  private readonly windowBytes: number;
  private readonly margin: number;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** The last window's bytes from where reading goes on, and the pickle's byte they start at. */
  private kept: Uint8Array = new Uint8Array(0);
  private base = 0;
  /** The next window must run at least to this byte of the pickle. */
  private need = 0;
  private result: { value: PickleValue } | null = null;

  /** `total`: the pickle's size, when known, for progress (0 if not). */
  constructor(total: number, options: PickleChunkOptions = {}) {
    this.reader = new PickleReader(total, options);
    this.windowBytes = options.windowBytes ?? WINDOW_BYTES;
    this.margin = windowMargin(options);
  }

  /** The next bytes of the pickle. Bytes after its STOP are never read, as pickle.load leaves them. */
  push(chunk: Uint8Array): void {
    if (this.result || chunk.length === 0) return;
    // A plain Uint8Array over the same memory, whatever subclass came (Node's Buffer): windows joined
    // from chunks are plain ones, and a reader that sees both kinds runs deoptimized (~20 ms of 46 MB).
    this.pending.push(chunk.constructor === Uint8Array ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.pendingBytes += chunk.length;
    const bytes = this.kept.length + this.pendingBytes;
    if (bytes >= this.windowBytes && this.base + bytes >= this.need) this.readWindow(false);
  }

  /** The input ended: the value (ImportError if the pickle does not end within it). */
  end(): PickleValue {
    if (!this.result) this.readWindow(true);
    return this.result!.value;
  }

  private readWindow(final: boolean): void {
    const margin = this.margin;
    // A few carried-over bytes before one large chunk: they are read in a small window joined to the
    // chunk's start, and the rest of the chunk where it lies, so that no chunk is copied whole.
    const first = this.pending[0];
    if (first && this.kept.length > 0 && this.pending.length === 1 && first.length >= 4 * margin) {
      const joined = concatBytes([this.kept, first.subarray(0, 2 * margin)], this.kept.length + 2 * margin);
      const read = this.reader.read(joined, this.base, false);
      if ('value' in read) return this.done(read);
      const inFirst = read.keepFrom - this.kept.length;
      this.base += read.keepFrom;
      this.need = read.need;
      this.kept = inFirst >= 0 ? new Uint8Array(0) : joined.subarray(read.keepFrom);
      this.pending = [first.subarray(inFirst >= 0 ? inFirst : 2 * margin)];
      this.pendingBytes = this.pending[0]!.length;
    }
    const window = concatBytes([this.kept, ...this.pending], this.kept.length + this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    const read = this.reader.read(window, this.base, final);
    if ('value' in read) return this.done(read);
    this.kept = window.subarray(read.keepFrom);
    this.base += read.keepFrom;
    this.need = read.need;
  }

  private done(read: { value: PickleValue }): void {
    this.result = read;
    this.kept = new Uint8Array(0);
    this.pending = [];
  }
}
