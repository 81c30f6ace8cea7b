// Segment addresses taken from a recording: a same-config replay lands every segment where the real
// run did, which makes it comparable with the recording event for event.
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
  /** Live segments: addr -> size. */
  private readonly live = new Map<number, number>();
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
    this.live.set(addr, size);
    return addr;
  }

  release(addr: number): void {
    this.live.delete(addr);
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
    this.live.set(addr, size);
    this.fallback.occupy(addr, size);
  }

  private overlapsLive(addr: number, size: number): boolean {
    for (const [a, s] of this.live) {
      if (addr < a + s && a < addr + size) return true;
    }
    return false;
  }
}
