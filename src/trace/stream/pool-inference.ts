// Which pool each allocation of a trace drew from: the default pools, or a private pool (a CUDA
// graph's, torch.compile's reduce-overhead mode, a torch.cuda.MemPool). A 2.12 trace entry says (its
// pool_id), and then that is all there is to it. A 2.11 one does not; the final snapshot's segments
// do, for the segments alive at the end. A segment freed during the trace takes the pool of the
// allocations around its first one on its stream (a capture or a use_mem_pool context routes a
// stretch of one stream's allocations to one pool), unless the recording rules that pool out: the
// allocator made the segment because the pool had no free block for its first allocation, so a pool
// with a large enough free block on that stream then is not its pool (a MemPool used in turn with
// the default pool, line by line, puts both pools' allocations around every segment). That works both
// ways: a pool that made a new segment while another had room for the request is not that one's. MemPools
// are numbered (0, 1), (0, 2), ... as they are made, so a number missing below the largest in the final
// snapshot is a MemPool gone before the end, and a segment freed in the trace that no live pool can own
// is the gone one's; where the stacks show the MemPool going away, the segments it freed are all its.
import { partitionPoint } from '../../lib/binary-search';
import type { SnapshotSegment } from '../snapshot/snapshot';
import { DEFAULT_POOL, type PoolId } from './request-stream';

/** A small pool segment's size (the large pool's are larger, or cudaMalloc'd for one request). */
const SMALL_SEGMENT = 2 * 1024 * 1024;

/** A segment's life in the trace, from its segment_alloc to its segment_free (or the end). */
export interface Incarnation {
  addr: number;
  size: number;
  stream: number;
  /** Trace index of its first allocation (its segment_alloc's when it has none). */
  first: number;
  /** Still there at the end: the final snapshot says its pool. */
  alive: boolean;
  /** Made before the trace began (and freed in it). */
  initial?: boolean;
  /** Pool index, once known. */
  pool: number;
  /** Request indices of the allocations it served, and their trace indices. */
  requests: number[];
  at: number[];
  /** Its live blocks (made in the trace): start -> end. */
  blocks?: Map<number, number>;
  /** Pools that had a free block for its first allocation when it was made: not its pool. */
  ruledOut?: Set<number>;
}

export class PoolInference {
  readonly pools: PoolId[] = [DEFAULT_POOL];
  /** Final segments: [start, end, pool index], by address. */
  private readonly finalRanges: [number, number, number][] = [];
  /** Segments made in the trace and not yet freed, by address. */
  private readonly live: Incarnation[] = [];
  private readonly all: Incarnation[] = [];
  /** Allocations whose pool is known, per stream, in trace order: [trace index, pool]. */
  private readonly known = new Map<number, [number, number][]>();
  /** Whether the final snapshot has any private pool (else every request is the default pools'). */
  readonly active: boolean;
  /** Segments freed during the trace whose pool nothing decided (the allocations around them disagree,
   * or there are none): taken as the default pools' (resolve() fills it). */
  readonly guessed: Incarnation[] = [];
  /** Pool indices of MemPools gone before the end (their numbers missing from the final snapshot's). */
  readonly gone = new Set<number>();

  /** `recorded`: the trace's own pool ids (TraceColumns.recordedPools), where it has them. */
  /** `round`: a request's size as the allocator rounds it (the recorded config's rounding). */
  constructor(
    finalSegments: readonly SnapshotSegment[],
    private readonly recorded?: ReadonlyMap<number, PoolId>,
    private readonly round: (size: number) => number = (size) => size,
  ) {
    for (const s of finalSegments) {
      const id = s.segment_pool_id ?? DEFAULT_POOL;
      this.finalRanges.push([s.address, s.address + s.total_size, this.indexOf(id)]);
    }
    this.finalRanges.sort((a, b) => a[0] - b[0]);
    for (const id of recorded?.values() ?? []) this.indexOf(id);
    if (!recorded) {
      const made = new Set(this.pools.filter((p) => p[0] === 0).map((p) => p[1]));
      const top = Math.max(0, ...made);
      for (let k = 1; k < top; k++) if (!made.has(k)) this.gone.add(this.indexOf([0, k]));
    }
    this.active = this.pools.length > 1;
  }

  /** The pool trace entry `at` records (the default pools' when it records none). */
  private recordedAt(at: number): number {
    const id = this.recorded!.get(at);
    return id ? this.indexOf(id) : 0;
  }

  private indexOf(id: PoolId): number {
    const i = this.pools.findIndex((p) => p[0] === id[0] && p[1] === id[1]);
    if (i >= 0) return i;
    this.pools.push([id[0], id[1]]);
    return this.pools.length - 1;
  }

  /** The pool of the final segment holding `addr` (0 when none does). */
  finalPoolAt(addr: number): number {
    const r = this.finalRanges;
    const k = lastAtOrBelow(r.length, (i) => r[i]![0] <= addr);
    const hit = r[k];
    return hit && addr < hit[1] ? hit[2] : 0;
  }

  segmentMade(addr: number, size: number, stream: number, at: number): void {
    const pool = this.recorded ? this.recordedAt(at) : -1;
    const inc: Incarnation = { addr, size, stream, first: at, alive: true, pool, requests: [], at: [], blocks: new Map() };
    const k = lastAtOrBelow(this.live.length, (i) => this.live[i]!.addr <= addr) + 1;
    this.live.splice(k, 0, inc);
    this.all.push(inc);
  }

  /**
   * The segment at `addr` was freed at trace index `at`: its life in the trace. One made before the
   * trace began had none: its pool is the one the entry records, else the final snapshot's there.
   */
  segmentGone(addr: number, size: number, stream: number, at: number): Incarnation {
    const k = this.live.findIndex((s) => s.addr === addr);
    if (k >= 0) {
      const [inc] = this.live.splice(k, 1);
      inc!.alive = false;
      return inc!;
    }
    const pool = this.recorded ? this.recordedAt(at) : this.finalPoolAt(addr);
    return { addr, size, stream, first: at, alive: false, initial: true, pool, requests: [], at: [] };
  }

  /** An allocation of `size` bytes at trace index `at` (request `request`): its pool now, or -1 until resolve(). */
  alloc(addr: number, size: number, stream: number, at: number, request: number): number {
    if (this.recorded) return this.recordedAt(at);
    const k = lastAtOrBelow(this.live.length, (i) => this.live[i]!.addr <= addr);
    const inc = this.live[k];
    if (inc && addr < inc.addr + inc.size) {
      if (inc.requests.length === 0) {
        inc.first = at;
        const rounded = this.round(size);
        const ruledOut = this.poolsWithRoomFor(rounded, inc);
        for (const p of inc.ruledOut ?? []) ruledOut.add(p);
        inc.ruledOut = ruledOut;
        // Its pool, where the final snapshot says, had no room: a segment with room is another pool's.
        const own = this.finalPoolOf(inc);
        if (own !== null) for (const y of this.live) if (y !== inc && this.comparable(y, inc) && this.hasRoom(y, rounded)) (y.ruledOut ??= new Set()).add(own);
      }
      inc.requests.push(request);
      inc.at.push(at);
      inc.blocks?.set(addr, addr + this.round(size));
      return -1;
    }
    // In a segment made before the trace began: the final snapshot's, if it is still there.
    const pool = this.finalPoolAt(addr);
    this.remember(stream, at, pool);
    return pool;
  }

  /** The block at `addr` went back to its pool. */
  freed(addr: number): void {
    if (this.recorded) return;
    const k = lastAtOrBelow(this.live.length, (i) => this.live[i]!.addr <= addr);
    this.live[k]?.blocks?.delete(addr);
  }

  /** The pools (those of segments alive at the end) with a free block of `size` bytes in a segment of
   * `made`'s stream and kind (small or large) other than `made`. */
  private poolsWithRoomFor(size: number, made: Incarnation): Set<number> {
    const out = new Set<number>();
    for (const y of this.live) {
      if (y === made || !this.comparable(y, made)) continue;
      const pool = this.finalPoolOf(y);
      if (pool !== null && !out.has(pool) && this.hasRoom(y, size)) out.add(pool);
    }
    return out;
  }

  /** Whether `y` could have served `made`'s first request: the same stream and kind (small or large). */
  private comparable(y: Incarnation, made: Incarnation): boolean {
    return y.stream === made.stream && (y.size === SMALL_SEGMENT) === (made.size === SMALL_SEGMENT) && y.blocks !== undefined;
  }

  /** Whether segment `y` has a free stretch of `size` bytes now. */
  private hasRoom(y: Incarnation, size: number): boolean {
    let from = y.addr;
    for (const [start, end] of [...y.blocks!].sort((a, b) => a[0] - b[0])) {
      if (start - from >= size) return true;
      from = Math.max(from, end);
    }
    return y.addr + y.size - from >= size;
  }

  /** The pool of the final segment that is exactly `inc` (same start and size), else null. */
  private finalPoolOf(inc: Incarnation): number | null {
    const r = this.finalRanges;
    const hit = r[lastAtOrBelow(r.length, (i) => r[i]![0] <= inc.addr)];
    return hit && hit[0] === inc.addr && hit[1] - hit[0] === inc.size ? hit[2] : null;
  }

  private remember(stream: number, at: number, pool: number): void {
    let list = this.known.get(stream);
    if (!list) this.known.set(stream, (list = []));
    list.push([at, pool]);
  }

  /**
   * Settles every segment's pool and writes it into `poolColumn` for the requests it served.
   * `releases`: the segments each empty_cache call freed, in order. torch.cuda.empty_cache() frees the
   * default pools' large segments, then their small ones, then each released private pool's small
   * ones, then its large ones: in such a run, what comes after the first large segment that follows a
   * small one is a private pool's, and what comes before it the default pools'. `onePool`: the runs a
   * MemPool going away made, each all one pool's. `retries`: the runs a segment_alloc follows (a
   * malloc's release and retry, or a MemPool going away where no stack says so): one that freed a gone
   * MemPool's segment was its going away, all its segments that pool's. Returns those runs.
   */
  resolve(
    poolColumn: Int32Array,
    releases: readonly (readonly Incarnation[])[],
    onePool: readonly (readonly Incarnation[])[] = [],
    retries: readonly (readonly Incarnation[])[] = [],
  ): Set<readonly Incarnation[]> {
    const goneWith = new Set<readonly Incarnation[]>();
    if (this.recorded) return goneWith; // every pool was known as it came
    for (const inc of this.all) {
      if (!inc.alive) continue;
      inc.pool = this.finalPoolAt(inc.addr);
      for (const at of inc.at) this.remember(inc.stream, at, inc.pool);
    }
    for (const list of this.known.values()) list.sort((a, b) => a[0] - b[0]);
    for (const inc of this.all) {
      if (inc.alive) continue;
      let pool = this.nearby(inc.stream, inc.first);
      if (inc.ruledOut && (pool === null || inc.ruledOut.has(pool))) {
        // What the recording leaves possible: one pool decides it.
        let possible = this.pools.map((_, k) => k).filter((k) => !inc.ruledOut!.has(k));
        // Freed before the end: a gone MemPool's segments all were, a live pool's need not be.
        if (possible.some((k) => this.gone.has(k))) possible = possible.filter((k) => this.gone.has(k));
        pool = possible.length === 1 ? possible[0]! : null;
      }
      if (pool === null && inc.requests.length > 0) this.guessed.push(inc);
      inc.pool = pool ?? 0;
    }
    for (const freed of releases) {
      const small = (x: Incarnation): boolean => x.size === SMALL_SEGMENT;
      const turn = freed.findIndex((x, k) => k > 0 && !small(x) && small(freed[k - 1]!));
      if (turn < 0) continue;
      freed.forEach((x, k) => {
        if (k < turn) x.pool = 0;
      });
    }
    for (const freed of retries) {
      const gone = new Set(freed.map((x) => x.pool).filter((p) => this.gone.has(p)));
      if (gone.size === 1) goneWith.add(freed);
    }
    for (const freed of [...onePool, ...goneWith]) {
      const named = new Set(freed.map((x) => x.pool).filter((p) => p !== 0));
      if (named.size !== 1) continue;
      const [pool] = named;
      for (const x of freed) x.pool = pool!;
    }
    for (const inc of this.all) for (const r of inc.requests) poolColumn[r] = inc.pool;
    return goneWith;
  }

  /** The pool of the known allocations around trace index `at` on `stream`: the one both sides agree
   * on, or the stream's only pool; null when they disagree or there are none. */
  private nearby(stream: number, at: number): number | null {
    const list = this.known.get(stream);
    if (!list || list.length === 0) return null;
    const k = lastAtOrBelow(list.length, (i) => list[i]![0] <= at);
    const before = list[k]?.[1];
    const after = list[k + 1]?.[1];
    if (before !== undefined && after !== undefined) return before === after ? before : null;
    const only = list[0]![1];
    return list.every((e) => e[1] === only) ? only : null;
  }
}

/** The last index i in [0, n) with pred(i) true, pred true for a prefix; -1 when none. */
function lastAtOrBelow(n: number, pred: (i: number) => boolean): number {
  return partitionPoint(0, n, pred) - 1;
}
