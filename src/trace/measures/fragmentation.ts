// Numbers that say how fragmented the allocator's memory is at one moment.
import type { CachingAllocator } from '../../allocator/caching-allocator';
import { Stat } from '../../allocator/stats';

export interface Fragmentation {
  /** Bytes reserved from the device but not allocated to tensors: what nvidia-smi shows as used. */
  reservedMinusAllocated: number;
  /** Free bytes inside segments that also hold allocations (PyTorch's inactive_split_bytes). */
  inactiveSplit: number;
  /** The largest request that could be served without a new cudaMalloc. */
  largestFreeBlock: number;
  /** 1 - largest free block / all cached free bytes: 0 when the free memory is one block. */
  externalRatio: number;
}

export function fragmentation(allocator: CachingAllocator): Fragmentation {
  const stats = allocator.stats;
  const free = allocator.reservedBytes - stats.current(Stat.allocated_bytes);
  const largest = allocator.largestFreeBlock();
  return {
    reservedMinusAllocated: free,
    inactiveSplit: stats.current(Stat.inactive_split_bytes),
    largestFreeBlock: largest,
    externalRatio: free > 0 ? 1 - largest / free : 0,
  };
}
