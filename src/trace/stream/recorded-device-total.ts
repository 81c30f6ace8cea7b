// The device's memory, read from where a recording's expandable_segments ranges lie. A snapshot does not
// say how much memory the device had, but each stream and pool reserves a virtual range of 1 1/8 of it
// (rounded up to its page size) and the driver puts the next range at the previous one's end rounded up
// to 32 MiB: the distance between neighbouring ranges bounds the total. A replay that assumed another
// card would reserve ranges of another size, and one range would swallow the start of the next.
import { KNOWN_DEVICE_TOTALS } from '../../allocator/capacity';
import { LARGE_BUFFER, MiB } from '../../allocator/constants';

/** The driver's alignment between reserved ranges (address-reservations.ts). */
const RANGE_ALIGN = 32 * MiB;

/**
 * The device total that the recorded mappings (segment_map events, in order) imply, or null when they
 * show fewer than two ranges. A known card's total where one fits the bounds, else one inside them.
 */
export function deviceTotalFromMappings(mappings: readonly { addr: number; size: number }[]): number | null {
  // A range is mapped from its start upward, so a mapping continues the range below it if it lies
  // within what that range has mapped so far, or just past it; any other mapping starts a range.
  const starts: number[] = [];
  const ends: number[] = [];
  for (const { addr, size } of mappings) {
    let k = -1;
    for (let r = 0; r < starts.length; r++) if (starts[r]! <= addr && addr <= ends[r]! && (k < 0 || starts[r]! > starts[k]!)) k = r;
    if (k < 0) {
      starts.push(addr);
      ends.push(addr + size);
    } else ends[k] = Math.max(ends[k]!, addr + size);
  }
  if (starts.length < 2) return null;
  const sorted = [...starts].sort((a, b) => a - b);
  let gap = Infinity;
  for (let i = 1; i < sorted.length; i++) gap = Math.min(gap, sorted[i]! - sorted[i - 1]!);
  // range = ceil(total * 9/8 / page) * page lies in (gap - 32 MiB, gap]; a page is at most 20 MiB here.
  const lo = ((gap - RANGE_ALIGN - LARGE_BUFFER) * 8) / 9;
  const hi = (gap * 8) / 9;
  return KNOWN_DEVICE_TOTALS.find((t) => t > lo && t <= hi) ?? Math.floor(((gap - RANGE_ALIGN) * 8) / 9) + 1;
}
