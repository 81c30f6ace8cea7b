// The generators' view of a RequestStreamBuilder: tensors by id, their sizes remembered so a free
// repeats its alloc's size, and liveness checked so a generator bug fails loudly at generation time
// rather than as a confusing replay.

import { formatSize } from '../../../allocator/format-size';
import { RequestStreamBuilder, type RequestStream } from '../request-stream';
import { WorkloadParamError } from './workload-param-error';
import { grouped } from '../../../lib/grouped';

/** Beyond this a stream's columns and its replay outgrow what a browser tab should hold (~40 bytes a request each). */
export const MAX_REQUESTS = 4_000_000;

export class TensorTracker {
  private readonly builder = new RequestStreamBuilder();
  /** Requested bytes per id while live, else 0 (a live size is always >= 1). */
  private sizes = new Float64Array(1024);
  liveBytes = 0;
  peakLiveBytes = 0;
  private readonly stepStarts: number[] = [];

  constructor(
    /** The parameter to name when the stream grows past `limit` (the one that scales it most directly). */
    private readonly limitKey = 'steps',
    private readonly limit = MAX_REQUESTS,
  ) {}

  get length(): number {
    return this.builder.length;
  }

  /** Allocates `bytes` (rounded to a whole number, at least 1) and returns the new id. */
  alloc(bytes: number, input = -1, stream = 0): number {
    this.checkLimit();
    const size = Math.max(1, Math.round(bytes));
    if (input >= 0 && !this.isLive(input)) throw new Error(`workload bug: input ${input} is not live`);
    const id = this.builder.newId();
    if (id >= this.sizes.length) {
      const grown = new Float64Array(this.sizes.length * 2);
      grown.set(this.sizes);
      this.sizes = grown;
    }
    this.sizes[id] = size;
    this.builder.alloc(id, size, stream, -1, input);
    this.liveBytes += size;
    if (this.liveBytes > this.peakLiveBytes) this.peakLiveBytes = this.liveBytes;
    return id;
  }

  free(id: number, stream = 0): void {
    this.checkLimit();
    const size = this.sizeOf(id);
    if (size === 0) throw new Error(`workload bug: free of ${id}, which is not live`);
    this.sizes[id] = 0;
    this.liveBytes -= size;
    this.builder.free(id, size, stream);
  }

  private checkLimit(): void {
    if (this.builder.length < this.limit) return;
    throw new WorkloadParamError(
      `These parameters make more than ${grouped(this.limit)} requests; lower "${this.limitKey}" ` +
        `(or the sizes that multiply it) to stay under that.`,
      this.limitKey,
    );
  }

  /** A step (iteration) of the workload begins with the next request. */
  markStep(): void {
    this.stepStarts.push(this.builder.length);
  }

  isLive(id: number): boolean {
    return this.sizeOf(id) > 0;
  }

  /** Requested bytes of a live id; 0 when it is not live. */
  sizeOf(id: number): number {
    return id >= 0 && id < this.sizes.length ? this.sizes[id]! : 0;
  }

  /** The stream's note: `summary` (no final period) plus the peak of live requested bytes, one sentence. */
  finish(summary: string): RequestStream {
    return this.builder.finish({
      notes: [`${summary}; peak live requested ${formatSize(this.peakLiveBytes)}.`],
      stepStarts: Int32Array.from(this.stepStarts),
    });
  }
}
