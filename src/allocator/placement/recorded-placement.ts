// Segment addresses taken from a recording: a same-config replay lands every segment where the real
// run did, which makes it comparable with the recording event for event.
import { partitionPoint, upperBound } from '../../lib/binary-search';
import { AddressReservations } from './address-reservations';
import type { DevicePlacement } from './segment-placement';

/** A segment the recording never made at that size (or whose address is taken): placed by the fallback. */
export interface PlacementMiss {
  size: number;
  addr: number;
}

export class RecordedPlacement implements DevicePlacement {
  /** Recorded addresses per segment size, in recording order. */
  private readonly queues = new Map<number, number[]>();
  private readonly heads = new Map<number, number>();
  /** Live segments as [start, end) ranges sorted by start, in two parallel arrays. They never
   * overlap (place() finds a free address, adoption refuses a clash), so their ends are sorted too. */
  private readonly liveStart: number[] = [];
  private readonly liveEnd: number[] = [];
  /** expandable_segments' virtual ranges. */
  private readonly reservations = new AddressReservations();
  /** The next recorded mapping that may start a new virtual range. */
  private mappingHead = 0;

  /** `mappings`: the recording's segment_map events in order (expandable_segments). */
  constructor(
    recorded: readonly { addr: number; size: number }[],
    private readonly fallback: DevicePlacement,
    private readonly onMiss: (miss: PlacementMiss) => void,
    private readonly mappings: readonly { addr: number; size: number }[] = [],
  ) {
    for (const { addr, size } of recorded) {
      let queue = this.queues.get(size);
      if (!queue) this.queues.set(size, (queue = []));
      queue.push(addr);
    }
  }

  place(size: number): number {
    const queue = this.queues.get(size);
    let head = this.heads.get(size) ?? 0;
    let addr: number | undefined;
    while (queue && head < queue.length) {
      const candidate = queue[head++]!;
      if (!this.overlapsLive(candidate, size)) {
        addr = candidate;
        break;
      }
    }
    this.heads.set(size, head);
    if (addr === undefined) {
      addr = this.fallback.place(size);
      this.onMiss({ size, addr });
    } else {
      this.fallback.occupy(addr, size);
    }
    this.addLive(addr, size);
    return addr;
  }

  release(addr: number): void {
    const i = upperBound(this.liveStart, addr) - 1;
    if (i >= 0 && this.liveStart[i] === addr) {
      this.liveStart.splice(i, 1);
      this.liveEnd.splice(i, 1);
    }
    this.fallback.release(addr);
  }

  /** A new range's first mapping is at its start: the next recorded mapping outside every live range. */
  reserve(size: number, at?: number): number {
    if (at !== undefined) return this.reservations.reserve(size, at);
    while (this.mappingHead < this.mappings.length) {
      const { addr } = this.mappings[this.mappingHead++]!;
      if (!this.reservations.holds(addr)) return this.reservations.reserve(size, addr);
    }
    const addr = this.reservations.reserve(size);
    this.onMiss({ size, addr });
    return addr;
  }

  unreserve(addr: number): void {
    this.reservations.release(addr);
  }

  occupy(addr: number, size: number): void {
    this.addLive(addr, size);
    this.fallback.occupy(addr, size);
  }

  private addLive(addr: number, size: number): void {
    const i = upperBound(this.liveStart, addr);
    this.liveStart.splice(i, 0, addr);
    this.liveEnd.splice(i, 0, addr + size);
  }

  /** Whether [addr, addr + size) overlaps a live segment: of the segments that start before it ends,
   * the last reaches furthest. A search, where a scan of every segment made a trace's placements
   * quadratic (n150's 234 segments: 2% of its replay). */
  private overlapsLive(addr: number, size: number): boolean {
    const end = addr + size;
    const i = partitionPoint(0, this.liveStart.length, (k) => this.liveStart[k]! < end) - 1;
    return i >= 0 && this.liveEnd[i]! > addr;
  }
}
