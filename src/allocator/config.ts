import { floorLog2 } from './bits';
import { LARGE_BUFFER, MiB, ROUNDUP_POWER2_INTERVALS } from './constants';

/** The allocator settings that PYTORCH_CUDA_ALLOC_CONF controls, in bytes. */
export interface AllocatorConfig {
  /** Blocks at or above this are never split; Infinity when unlimited (PyTorch: SIZE_MAX). */
  readonly maxSplitSize: number;
  /** A request at or above maxSplitSize may take a block at most this much larger. */
  readonly maxNonSplitRounding: number;
  /** large_segment_size_mb (torch 2.11): the segment for requests of 1 to 10 MiB, the large pool's page
   * under expandable_segments, the floor of max_split_size and the default of max_non_split_rounding. */
  readonly largeSegmentSize: number;
  /** Divisions per power-of-two bucket: index 0 covers sizes below 2 MiB, index k [2^(20+k), 2^(21+k)). */
  readonly roundupPower2Divisions: readonly number[];
  /** 0 = off; else gc of cached blocks when reserved exceeds this fraction of the memory cap. */
  readonly garbageCollectionThreshold: number;
  readonly expandableSegments: boolean;
  /** 'native' or 'cudaMallocAsync'. */
  readonly backend: 'native' | 'cudaMallocAsync';
  /** per_process_memory_fraction, when given (a cap relative to the device's total memory). */
  readonly perProcessMemoryFraction?: number;
  /** Accepted keys that do not change the device allocator's decisions (pinned_*, release_lock_on_cudamalloc ...). */
  readonly passive: Readonly<Record<string, string>>;
}

export const DEFAULT_CONFIG: AllocatorConfig = Object.freeze({
  maxSplitSize: Infinity,
  maxNonSplitRounding: LARGE_BUFFER,
  largeSegmentSize: LARGE_BUFFER,
  roundupPower2Divisions: Object.freeze(new Array<number>(ROUNDUP_POWER2_INTERVALS).fill(0)),
  garbageCollectionThreshold: 0,
  expandableSegments: false,
  backend: 'native',
  passive: Object.freeze({}),
});

/** Bucket of roundup_power2_divisions that applies to `size`: log2(size) - 20, clamped to 0..15. */
export function divisionIndex(size: number): number {
  const log2 = floorLog2(size);
  return Math.min(Math.max(log2 - 20, 0), ROUNDUP_POWER2_INTERVALS - 1);
}

/** Label PyTorch gives bucket `index` in allocator_settings ('1', '2', ... '32768': MiB). */
export function divisionLabel(index: number): string {
  return String(2 ** index);
}

/** max_split_size as memory_stats() reports it (a size_t read as int64): -1 when unlimited. */
export function maxSplitSizeStat(config: AllocatorConfig): number {
  if (!Number.isFinite(config.maxSplitSize)) return -1;
  return config.maxSplitSize >= 2 ** 63 ? config.maxSplitSize - 2 ** 64 : config.maxSplitSize;
}

/** The config written back as a PYTORCH_CUDA_ALLOC_CONF string that PyTorch parses to the same settings. */
export function configToString(config: AllocatorConfig): string {
  const parts: string[] = [];
  if (config.backend !== 'native') parts.push(`backend:${config.backend}`);
  if (config.largeSegmentSize !== LARGE_BUFFER) parts.push(`large_segment_size_mb:${config.largeSegmentSize / MiB}`);
  if (Number.isFinite(config.maxSplitSize)) parts.push(`max_split_size_mb:${config.maxSplitSize / MiB}`);
  if (config.maxNonSplitRounding !== config.largeSegmentSize) {
    parts.push(`max_non_split_rounding_mb:${config.maxNonSplitRounding / MiB}`);
  }
  const div = config.roundupPower2Divisions;
  if (div.some((d) => d !== 0)) {
    if (div.every((d) => d === div[0])) {
      parts.push(`roundup_power2_divisions:${div[0]}`);
    } else {
      // Explicit per-bucket list; the first entry also fills the buckets below it, so list them all.
      parts.push(`roundup_power2_divisions:[${div.map((d, i) => `${divisionLabel(i)}:${d}`).join(',')}]`);
    }
  }
  if (config.garbageCollectionThreshold > 0) {
    parts.push(`garbage_collection_threshold:${config.garbageCollectionThreshold}`);
  }
  if (config.expandableSegments) parts.push('expandable_segments:True');
  if (config.perProcessMemoryFraction !== undefined) {
    parts.push(`per_process_memory_fraction:${config.perProcessMemoryFraction}`);
  }
  for (const [key, value] of Object.entries(config.passive)) parts.push(`${key}:${value}`);
  return parts.join(',');
}

/** True when two configs make the device allocator take the same decisions. */
export function sameDecisions(a: AllocatorConfig, b: AllocatorConfig): boolean {
  return (
    a.maxSplitSize === b.maxSplitSize &&
    a.maxNonSplitRounding === b.maxNonSplitRounding &&
    a.largeSegmentSize === b.largeSegmentSize &&
    a.perProcessMemoryFraction === b.perProcessMemoryFraction &&
    a.garbageCollectionThreshold === b.garbageCollectionThreshold &&
    a.expandableSegments === b.expandableSegments &&
    a.backend === b.backend &&
    a.roundupPower2Divisions.every((d, i) => d === b.roundupPower2Divisions[i])
  );
}
