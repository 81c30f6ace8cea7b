// A pickle that arrives in chunks of any size (a File's stream, an inflater's output), read as it
// comes: the chunks are gathered into windows of WINDOW_BYTES or more for the reader (which stops
// within WINDOW_MARGIN of a window's end and goes on in the next), so the input is never held whole.
// A 1 GB snapshot then costs a window, not a gigabyte, beside what is read from it.
import { concatBytes } from '../../lib/concat-bytes';
import { PickleReader, type ReadPickleOptions } from './pickle-reader';
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
  }

  /** The next bytes of the pickle. Bytes after its STOP are never read, as pickle.load leaves them. */
  push(chunk: Uint8Array): void {
    if (this.result || chunk.length === 0) return;
    this.pending.push(chunk);
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
    const window = concatBytes([this.kept, ...this.pending], this.kept.length + this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    const read = this.reader.read(window, this.base, final);
    if ('value' in read) {
      this.result = read;
      this.kept = new Uint8Array(0);
      return;
    }
    this.kept = window.subarray(read.keepFrom);
    this.base += read.keepFrom;
    this.need = read.need;
  }
}
