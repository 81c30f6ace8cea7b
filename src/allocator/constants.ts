// Sizes fixed in PyTorch's c10/cuda/CUDACachingAllocator.cpp (torch 2.11).

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/** Every request is rounded to at least this, and to a multiple of it. */
export const MIN_BLOCK_SIZE = 512;
/** Rounded requests up to this size go to the small pool. */
export const SMALL_SIZE = 1 * MiB;
/** Segment size for small-pool requests. */
export const SMALL_BUFFER = 2 * MiB;
/** Segment size for large requests below MIN_LARGE_ALLOC; also the default max_non_split_rounding. */
export const LARGE_BUFFER = 20 * MiB;
/** Large requests from this size on get a segment of their own, rounded to ROUND_LARGE. */
export const MIN_LARGE_ALLOC = 10 * MiB;
export const ROUND_LARGE = 2 * MiB;
/** roundup_power2_divisions has one bucket per power of two from 1 MiB to 64 GiB. */
export const ROUNDUP_POWER2_INTERVALS = 16;
/** max_split_size_mb must be at least this many MiB. */
export const MIN_MAX_SPLIT_SIZE_MB = LARGE_BUFFER / MiB;
