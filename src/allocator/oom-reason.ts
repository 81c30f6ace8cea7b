// Why a request failed, in words: what the cache had, what the cap or the device had left, and the
// setting that stood in the way. PyTorch's own message gives only the totals.
import { formatSize } from './format-size';

export interface OomCircumstances {
  /** The rounded request and the segment (or pages) it needed. */
  size: number;
  segmentSize: number;
  stream: number;
  /** The largest cached free block of the request's pool and stream, after the cache was released. */
  largestCached: number;
  /** A cached block large enough that the max_split rules kept from the request (0: none). */
  refusedBlock: number;
  maxSplitSize: number;
  maxNonSplitRounding: number;
  reserved: number;
  allocated: number;
  /** The memory-fraction cap, if any. */
  allowed?: number;
  /** Bytes the device had free for a new segment. */
  deviceFree: number;
  expandable: boolean;
}

export function explainOom(c: OomCircumstances): string[] {
  const why: string[] = [];
  const stream = c.stream === 0 ? 'the default stream' : `stream ${c.stream}`;
  if (c.refusedBlock > 0) {
    why.push(
      c.size < c.maxSplitSize
        ? `A cached block of ${formatSize(c.refusedBlock)} could have held it, but max_split_size_mb (${formatSize(c.maxSplitSize)}) ` +
            'keeps requests below it from taking blocks at or above it, so they stay whole for large requests.'
        : `A cached block of ${formatSize(c.refusedBlock)} could have held it, but a request at or above max_split_size_mb takes ` +
            `a cached block only if it wastes less than ${formatSize(c.maxNonSplitRounding)} (max_non_split_rounding_mb).`,
    );
  } else {
    why.push(
      c.largestCached > 0
        ? `No cached free block of ${stream} could hold ${formatSize(c.size)}: the largest is ${formatSize(c.largestCached)}, ` +
            'in a segment that other allocations still pin (a whole free segment would have been released and retried).'
        : `The cache held no free block of ${stream} in that pool, after releasing every whole free segment and retrying.`,
    );
  }
  const need = c.expandable ? `Mapping ${formatSize(c.segmentSize)} more` : `A new segment of ${formatSize(c.segmentSize)}`;
  if (c.allowed !== undefined && c.reserved + c.segmentSize > c.allowed) {
    why.push(
      `${need} would bring reserved memory to ${formatSize(c.reserved + c.segmentSize)}, past the ${formatSize(c.allowed)} ` +
        'allowed by set_per_process_memory_fraction.',
    );
  } else {
    why.push(`${need} did not fit in the ${formatSize(c.deviceFree)} the device had free.`);
  }
  const cached = c.reserved - c.allocated;
  if (cached >= c.segmentSize) {
    why.push(
      `PyTorch held ${formatSize(cached)} reserved but unallocated: enough in total, but not in one piece it could use. ` +
        (c.expandable ? '' : 'expandable_segments:True lets free pages be unmapped and mapped again where they are needed.'),
    );
  }
  return why.filter((s) => s !== '');
}
