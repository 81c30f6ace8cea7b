// Physical memory of the simulated GPU, in 2 MiB frames. CUDA maps a segment's virtual range onto
// physical pages wherever they are free, so a segment needs free frames, not one contiguous range.
// The arena mirrors physical memory: frames, not virtual addresses, decide where a block's words live.
import { MiB } from '../constants';

/** cudaMalloc's granularity: every segment is a whole number of 2 MiB pages. */
export const FRAME_BYTES = 2 * MiB;

export class PhysicalFrames {
  readonly frameCount: number;
  /** Free frames as a binary min-heap: a new segment takes the lowest ones, so it stays contiguous
   * while memory is not fragmented (fewer arena chunks). */
  private readonly heap: Int32Array;
  private heapSize: number;
  private readonly bySegment = new Map<number, Int32Array>();

  constructor(deviceBytes: number) {
    this.frameCount = Math.floor(deviceBytes / FRAME_BYTES);
    // 0, 1, 2, ... is already a valid min-heap.
    this.heap = Int32Array.from({ length: this.frameCount }, (_, i) => i);
    this.heapSize = this.frameCount;
  }

  get freeFrames(): number {
    return this.heapSize;
  }

  /** Frames for the segment at `addr`; null (and nothing taken) when too few are free. */
  map(addr: number, size: number): Int32Array | null {
    const need = Math.ceil(size / FRAME_BYTES);
    if (need > this.heapSize) return null;
    const frames = new Int32Array(need);
    for (let i = 0; i < need; i++) frames[i] = this.pop();
    this.bySegment.set(addr, frames);
    return frames;
  }

  unmap(addr: number): void {
    const frames = this.bySegment.get(addr);
    if (!frames) return;
    this.bySegment.delete(addr);
    for (const f of frames) if (f >= 0) this.push(f);
  }

  /**
   * expandable_segments: frames for the pages at [offset, offset + size) of the virtual range at `base`
   * (its frame table, indexed by 2 MiB page, holds -1 where nothing is mapped). False, with nothing
   * taken, when too few are free.
   */
  mapPages(base: number, offset: number, size: number): boolean {
    const first = Math.floor(offset / FRAME_BYTES);
    const end = Math.ceil((offset + size) / FRAME_BYTES);
    if (end - first > this.heapSize) return false;
    let frames = this.bySegment.get(base);
    if (!frames || frames.length < end) {
      // Grows by doubling: ranges grow a page or a request at a time.
      const grown = new Int32Array(Math.max(end, 2 * (frames?.length ?? 0))).fill(-1);
      if (frames) grown.set(frames);
      frames = grown;
      this.bySegment.set(base, frames);
    }
    for (let i = first; i < end; i++) frames[i] = this.pop();
    return true;
  }

  unmapPages(base: number, offset: number, size: number): void {
    const frames = this.bySegment.get(base);
    if (!frames) return;
    const end = Math.min(frames.length, Math.ceil((offset + size) / FRAME_BYTES));
    for (let i = Math.floor(offset / FRAME_BYTES); i < end; i++) {
      if (frames[i]! >= 0) this.push(frames[i]!);
      frames[i] = -1;
    }
  }

  /** A segment's frames by 2 MiB page (-1: an unmapped page of an expandable segment). */
  framesOf(addr: number): Int32Array | undefined {
    return this.bySegment.get(addr);
  }

  private pop(): number {
    const h = this.heap;
    const top = h[0]!;
    const last = h[--this.heapSize]!;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.heapSize) break;
      const r = l + 1;
      const c = r < this.heapSize && h[r]! < h[l]! ? r : l;
      if (h[c]! >= last) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = last;
    return top;
  }

  private push(frame: number): void {
    const h = this.heap;
    let i = this.heapSize++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]! <= frame) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = frame;
  }
}
