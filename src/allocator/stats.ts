// memory_stats() counters under PyTorch's names (DeviceStats in CUDACachingAllocator.h).
// Kept in one Float64Array: the replay updates them several times per event.
// "active" differs from "allocation" only while a freed block waits for CUDA events of other streams
// (record_stream). Where no free is deferred, active* is reported as allocation* instead of being
// counted twice on the hot path; an allocator that sees deferred frees counts it for real.

/** Stats kept per pool type ("all", "small_pool", "large_pool"), each with current/peak/allocated/freed. */
export const POOL_STATS = [
  'allocation',
  'segment',
  'active',
  'inactive_split',
  'allocated_bytes',
  'reserved_bytes',
  'active_bytes',
  'inactive_split_bytes',
  'requested_bytes',
] as const;
/** Stats kept once (no pool types), each with current/peak/allocated/freed. */
const OVERSIZE_STATS = ['oversize_allocations', 'oversize_segments'] as const;
type PoolStat = (typeof POOL_STATS)[number];
type OversizeStat = (typeof OVERSIZE_STATS)[number];

/** Stat.x: x's index in POOL_STATS, the oversize stats after them (a frozen table, read like an enum). */
export const Stat = Object.freeze(
  Object.fromEntries([...POOL_STATS, ...OVERSIZE_STATS].map((name, i) => [name, i])) as Record<PoolStat | OversizeStat, number>,
);

const POOL_TYPES = ['all', 'small_pool', 'large_pool'] as const;
const FIELDS = ['current', 'peak', 'allocated', 'freed'] as const;
const COUNTERS = ['num_alloc_retries', 'num_ooms', 'num_sync_all_streams', 'num_device_alloc', 'num_device_free'] as const;
export type Counter = (typeof COUNTERS)[number];
/** Counter name -> index, so that reading one (the replay does per request) costs no search. */
const COUNTER_INDEX = Object.fromEntries(COUNTERS.map((c, i) => [c, i])) as Record<Counter, number>;

// Layout: pool stats at ((stat * 3 + poolType) * 4 + field); the two oversize stats after them
// (one Stat each, no pool types); then the plain counters.
const POOL_BASE = 0;
const OVERSIZE_BASE = POOL_STATS.length * 3 * 4;
const COUNTER_BASE = OVERSIZE_BASE + OVERSIZE_STATS.length * 4;
const LENGTH = COUNTER_BASE + COUNTERS.length;

export class AllocatorStats {
  readonly values = new Float64Array(LENGTH);

  /** `countActive`: active* are counted on their own (deferred frees happen), else they mirror allocation*. */
  constructor(readonly countActive = false) {}

  /** The stat whose counters stand for `stat` (see above). */
  private mirrored(stat: number): number {
    if (this.countActive) return stat;
    if (stat === Stat.active) return Stat.allocation;
    if (stat === Stat.active_bytes) return Stat.allocated_bytes;
    return stat;
  }

  /**
   * Adds to a pool stat for the block's pool and for "all". Of "all", only current and peak are
   * kept here (the replay updates stats several times per request): its allocated and freed are
   * the two pools' sums, which toRecord adds up.
   */
  increase(stat: number, small: boolean, amount: number): void {
    const all = POOL_BASE + stat * 12;
    this.bump(all + (small ? 4 : 8), amount);
    const v = this.values;
    const current = v[all]! + amount;
    v[all] = current;
    if (current > v[all + 1]!) v[all + 1] = current;
  }

  decrease(stat: number, small: boolean, amount: number): void {
    const all = POOL_BASE + stat * 12;
    this.drop(all + (small ? 4 : 8), amount);
    this.values[all]! -= amount;
  }

  /** `stat`: Stat.oversize_allocations or Stat.oversize_segments. */
  increaseOversize(stat: number): void {
    this.bump(OVERSIZE_BASE + (stat - POOL_STATS.length) * 4, 1);
  }

  decreaseOversize(stat: number): void {
    this.drop(OVERSIZE_BASE + (stat - POOL_STATS.length) * 4, 1);
  }

  count(counter: Counter): void {
    this.values[COUNTER_BASE + COUNTER_INDEX[counter]]! += 1;
  }

  /** torch.cuda.reset_peak_memory_stats(): every peak falls to its current value. */
  resetPeaks(): void {
    const v = this.values;
    for (let at = POOL_BASE; at < COUNTER_BASE; at += 4) v[at + 1] = v[at]!;
  }

  /** A pool stat's current value for "all". */
  current(stat: number): number {
    return this.values[POOL_BASE + this.mirrored(stat) * 12]!;
  }

  counter(counter: Counter): number {
    return this.values[COUNTER_BASE + COUNTER_INDEX[counter]]!;
  }

  /** The flat dict torch.cuda.memory_stats() returns, less max_split_size (the allocator adds it). */
  toRecord(): Record<string, number> {
    const out: Record<string, number> = {};
    const v = this.values;
    // "allocated" is not kept: it is current + freed (nothing resets the accumulated counts), which
    // spares each increase a write.
    const field = (at: number, f: number): number => (f === 2 ? v[at]! + v[at + 3]! : v[at + f]!);
    POOL_STATS.forEach((name, s) => {
      const at = (t: number, f: number): number => field(POOL_BASE + (this.mirrored(s) * 3 + t) * 4, f);
      POOL_TYPES.forEach((type, t) => {
        FIELDS.forEach((fieldName, f) => {
          // "all" keeps current and peak itself; allocated (2) and freed (3) are the pools' sums.
          out[`${name}.${type}.${fieldName}`] = t === 0 && f >= 2 ? at(1, f) + at(2, f) : at(t, f);
        });
      });
    });
    OVERSIZE_STATS.forEach((name, s) => {
      FIELDS.forEach((fieldName, f) => {
        out[`${name}.${fieldName}`] = field(OVERSIZE_BASE + s * 4, f);
      });
    });
    COUNTERS.forEach((name, c) => {
      out[name] = v[COUNTER_BASE + c]!;
    });
    return out;
  }

  private bump(at: number, amount: number): void {
    const v = this.values;
    const current = v[at]! + amount;
    v[at] = current;
    if (current > v[at + 1]!) v[at + 1] = current;
  }

  private drop(at: number, amount: number): void {
    this.values[at]! -= amount;
    this.values[at + 3]! += amount;
  }
}
