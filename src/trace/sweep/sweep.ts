// One replay per max_split_size setting: where OOMs vanish, what it costs in reserved memory and churn.
import type { Capacity } from '../../allocator/capacity';
import { MiB } from '../../allocator/constants';
import { replaySnapshot } from '../replay/replay-snapshot';
import type { RequestStream } from '../stream/request-stream';
import type { Snapshot } from '../snapshot/snapshot';
import type { TraceColumns } from '../snapshot/trace-columns';
import { configToString, DEFAULT_CONFIG, sameDecisions, type AllocatorConfig } from '../../allocator/config';
import { replay, type InsertedCalls } from '../replay/replay';
import { ConfigError } from '../../allocator/config-error';
import { recordedConfig } from '../snapshot/recorded-config';
import { capOf, oomCap } from '../stream/recorded-cap';

export interface SweepRow {
  /** max_split_size_mb, or null for unlimited. */
  max_split_size_mb: number | null;
  conf: string;
  'reserved_bytes.all.peak': number;
  'allocated_bytes.all.peak': number;
  /** memory_stats()'s count at the end, as if the program caught each OOM and went on ... */
  num_ooms: number;
  /** ... where PyTorch raises at the first: its request (0-based), null when none came. */
  first_oom_request: number | null;
  num_alloc_retries: number;
  num_device_alloc: number;
  num_device_free: number;
  /** Largest cached free block when reserved memory peaked. */
  largest_free_block_at_peak: number;
  /** (reserved - allocated) / reserved when reserved memory peaked. */
  fragmentation_at_peak: number;
}

/** Parses "20,64,128,none" into MiB values (null = unlimited). */
export function parseMaxSplitList(text: string): (number | null)[] {
  return text.split(',').map((part) => {
    const t = part.trim().toLowerCase();
    if (t === 'none' || t === 'unlimited' || t === 'inf') return null;
    if (!/^\d+$/.test(t)) throw new ConfigError(`'${part}' is not a max_split_size_mb value: use whole MiB or none.`);
    return Number(t);
  });
}

/** `capacity`: absent, the cap a recorded OOM shows (if any); null, none. */
export function sweepMaxSplit(
  snapshot: Snapshot,
  values: readonly (number | null)[],
  options: { capacity?: Capacity | null; stream?: RequestStream; trace?: TraceColumns } = {},
): SweepRow[] {
  const recorded = recordedConfig(snapshot.allocator_settings).config;
  const stream =
    options.stream ??
    replaySnapshot(snapshot, { statsOnly: true, until: -1, ...(options.trace ? { trace: options.trace } : {}) }).stream;
  const inferred = options.capacity === undefined ? oomCap(stream) : null;
  const capacity = options.capacity ?? (inferred ? capOf(inferred) : undefined);
  return values.map((mb) => sweepRow(stream, recorded, recorded, mb, capacity));
}

/**
 * One setting of a sweep: `base` with max_split_size_mb set to `mb`, replayed as replaySnapshot
 * would (recorded addresses when the config makes the recorded decisions, else the driver model).
 * `recorded` is null for a source with no recording (a generated workload).
 */
export function sweepRow(
  stream: RequestStream,
  base: AllocatorConfig,
  recorded: AllocatorConfig | null,
  mb: number | null,
  capacity?: Capacity,
  calls: InsertedCalls = {},
): SweepRow {
  return configRow(stream, { ...base, maxSplitSize: mb === null ? Infinity : mb * MiB }, recorded, capacity, calls);
}

/** The figures of one config replayed as replaySnapshot would (see sweepRow), with the inserted calls of the view. */
export function configRow(stream: RequestStream, config: AllocatorConfig, recorded: AllocatorConfig | null, capacity?: Capacity, calls: InsertedCalls = {}): SweepRow {
  const mb = Number.isFinite(config.maxSplitSize) ? config.maxSplitSize / MiB : null;
  const { stats, atPeak, ooms } = replay(stream, {
    config,
    addresses: recorded && sameDecisions(config, recorded) ? 'recorded' : 'simulated',
    statsOnly: true,
    ...(capacity ? { capacity } : {}),
    ...calls,
  });
  return {
    max_split_size_mb: mb,
    conf: configToString(config),
    'reserved_bytes.all.peak': stats['reserved_bytes.all.peak']!,
    'allocated_bytes.all.peak': stats['allocated_bytes.all.peak']!,
    num_ooms: stats['num_ooms']!,
    first_oom_request: ooms[0]?.request ?? null,
    num_alloc_retries: stats['num_alloc_retries']!,
    num_device_alloc: stats['num_device_alloc']!,
    num_device_free: stats['num_device_free']!,
    largest_free_block_at_peak: atPeak.largestFreeBlock,
    fragmentation_at_peak: atPeak.reserved > 0 ? (atPeak.reserved - atPeak.allocated) / atPeak.reserved : 0,
  };
}

/** Settings a sweep can run over besides max_split_size_mb (the slider's). */
export type SweepParam = 'roundup_power2_divisions' | 'garbage_collection_threshold';

/** Values worth sweeping: divisions for every size bucket (0: off), and gc thresholds. */
export const PARAM_VALUES: Record<SweepParam, readonly number[]> = {
  roundup_power2_divisions: [0, 2, 4, 8, 16],
  garbage_collection_threshold: [0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9],
};

/** `base` with `param` set to `value` (divisions apply to every size bucket). */
export function withParam(base: AllocatorConfig, param: SweepParam, value: number): AllocatorConfig {
  if (param === 'roundup_power2_divisions') {
    if (value !== 0 && (value < 1 || !Number.isInteger(Math.log2(value)))) {
      throw new ConfigError(`roundup_power2_divisions must be a power of two, not ${value}.`);
    }
    return { ...base, roundupPower2Divisions: base.roundupPower2Divisions.map(() => value) };
  }
  if (!(value >= 0 && value < 1)) throw new ConfigError(`garbage_collection_threshold must be in [0, 1), not ${value}.`);
  return { ...base, garbageCollectionThreshold: value };
}

/** Parses "0,2,4,8" (or "0.5,0.6") for a parameter sweep. */
export function parseParamValues(param: SweepParam, text: string): number[] {
  return text.split(',').map((part) => {
    const v = Number(part.trim());
    if (part.trim() === '' || !Number.isFinite(v)) throw new ConfigError(`'${part}' is not a ${param} value.`);
    withParam(DEFAULT_CONFIG, param, v); // checks it
    return v;
  });
}

/** One replay per value of `param`, on top of `base`. */
export function sweepParam(
  stream: RequestStream,
  base: AllocatorConfig,
  recorded: AllocatorConfig | null,
  param: SweepParam,
  values: readonly number[],
  capacity?: Capacity,
): SweepRow[] {
  return values.map((v) => configRow(stream, withParam(base, param, v), recorded, capacity));
}
