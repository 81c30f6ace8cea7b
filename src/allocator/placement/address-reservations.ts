// Where cuMemAddressReserve puts the virtual ranges of expandable segments. In the reference traces
// (CUDA 13, H200) the first range starts at 0x302000000 and each next one at the previous one's end
// rounded up to 32 MiB, far below the cudaMalloc'd segments (driver-placement.ts). Only ties between
// blocks of one pool and stream depend on these addresses, and each range serves one of those.
import { MiB } from '../constants';

export const FIRST_RESERVATION = 0x3_0200_0000;
const ALIGN = 32 * MiB;

export class AddressReservations {
  /** Live ranges: start -> size. */
  private readonly live = new Map<number, number>();

  /** The lowest aligned address from FIRST_RESERVATION up where `size` bytes are free; `at`: a range
   * already there. */
  reserve(size: number, at?: number): number {
    let addr = at ?? FIRST_RESERVATION;
    if (at === undefined) {
      for (const [start, length] of [...this.live].sort((a, b) => a[0] - b[0])) {
        if (addr + size <= start) break;
        addr = Math.max(addr, Math.ceil((start + length) / ALIGN) * ALIGN);
      }
    }
    this.live.set(addr, size);
    return addr;
  }

  release(addr: number): void {
    this.live.delete(addr);
  }

  /** Whether `addr` lies in a live range. */
  holds(addr: number): boolean {
    for (const [start, length] of this.live) if (start <= addr && addr < start + length) return true;
    return false;
  }
}
