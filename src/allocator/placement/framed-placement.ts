// The device model of a GPU stress run: the driver placement decides virtual addresses as in any
// replay, and each segment also takes physical frames, which locate its blocks in the arena.
import type { DevicePlacement } from './segment-placement';
import type { PhysicalFrames } from './physical-frames';

export class FramedPlacement implements DevicePlacement {
  /** Segments that found no free frames (only when the allocator may exceed the device). */
  unmappedSegments = 0;

  constructor(
    private readonly inner: DevicePlacement,
    readonly frames: PhysicalFrames,
  ) {}

  place(size: number): number {
    const addr = this.inner.place(size);
    this.mapFrames(addr, size);
    return addr;
  }

  release(addr: number): void {
    this.frames.unmap(addr);
    this.inner.release(addr);
  }

  occupy(addr: number, size: number): void {
    this.inner.occupy(addr, size);
    this.mapFrames(addr, size);
  }

  reserve(size: number, at?: number): number {
    return this.inner.reserve(size, at);
  }

  unreserve(addr: number): void {
    this.frames.unmap(addr);
    this.inner.unreserve(addr);
  }

  mapPages(base: number, addr: number, size: number): void {
    if (!this.frames.mapPages(base, addr - base, size)) this.unmappedSegments++;
  }

  unmapPages(base: number, addr: number, size: number): void {
    this.frames.unmapPages(base, addr - base, size);
  }

  private mapFrames(addr: number, size: number): void {
    if (!this.frames.map(addr, size)) this.unmappedSegments++;
  }
}
