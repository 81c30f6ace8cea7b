// What the allocator asks of the device about addresses: where a new segment (or an expandable
// segment's virtual range) lands, and that it went back. The models of that answer live beside this
// file: the CUDA driver's (driver-placement.ts), a recording's own addresses (recorded-placement.ts),
// and physical frames for the GPU arena on top of either (framed-placement.ts).

/** What the caching allocator needs of the device's address space. */
export interface SegmentPlacement {
  /** Address for a new segment of `size` bytes. */
  place(size: number): number;
  /** The segment at `addr` was cudaFree'd. */
  release(addr: number): void;
  /** expandable_segments: address for a virtual range of `size` bytes (cuMemAddressReserve); `at`:
   * one that already exists there (made before a trace began). */
  reserve(size: number, at?: number): number;
  /** The virtual range at `addr` went back (cuMemAddressFree). */
  unreserve(addr: number): void;
  /** Physical pages were mapped at [addr, addr + size) of the virtual range at `base`. */
  mapPages?(base: number, addr: number, size: number): void;
  /** ... and unmapped from there. */
  unmapPages?(base: number, addr: number, size: number): void;
}

/** A placement that can also be told about segments it did not place. */
export interface DevicePlacement extends SegmentPlacement {
  /** A segment that already exists at a known address (e.g. made before a trace began). */
  occupy(addr: number, size: number): void;
}
