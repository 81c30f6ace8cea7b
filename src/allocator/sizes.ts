// Request rounding and segment sizing (round_size, roundup_power2_next_division, get_allocation_size).
import { floorLog2, isPowerOf2 } from './bits';
import { divisionIndex, type AllocatorConfig } from './config';
import { LARGE_BUFFER, MIN_BLOCK_SIZE, MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE } from './constants';

/** Rounds up to the next of `divisions` equal steps between the powers of two around `size`. */
function roundupPower2NextDivision(size: number, divisions: number): number {
  if (isPowerOf2(size)) return size;
  const floor = 2 ** floorLog2(size);
  const step = floor / divisions;
  if (step < 1) return floor * 2;
  const rounded = Math.floor(size / step) * step;
  return rounded === size ? size : rounded + step;
}

/** The block size a request of `size` bytes gets. Idempotent: roundSize(roundSize(x)) === roundSize(x). */
export function roundSize(size: number, config: AllocatorConfig): number {
  if (size < MIN_BLOCK_SIZE) return MIN_BLOCK_SIZE;
  const divisions = config.roundupPower2Divisions[divisionIndex(size)]!;
  if (divisions > 1 && size > MIN_BLOCK_SIZE * divisions) return roundupPower2NextDivision(size, divisions);
  return Math.ceil(size / MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE;
}

/** Rounded sizes up to 1 MiB are served from the small pool. */
export function isSmallSize(roundedSize: number): boolean {
  return roundedSize <= SMALL_SIZE;
}

/** The cudaMalloc size for a new segment that must hold a rounded request (get_allocation_size);
 * `largeSegmentSize`: large_segment_size_mb's, for requests of 1 to 10 MiB. */
export function segmentSizeFor(roundedSize: number, largeSegmentSize = LARGE_BUFFER): number {
  if (roundedSize <= SMALL_SIZE) return SMALL_BUFFER;
  if (roundedSize < MIN_LARGE_ALLOC) return largeSegmentSize;
  return Math.ceil(roundedSize / ROUND_LARGE) * ROUND_LARGE;
}
