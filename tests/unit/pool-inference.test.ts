// Which pool a 2.11 trace's allocations drew from, where the trace records none: a segment freed
// during the trace takes the pool of the allocations around it on its stream, and where those disagree
// (a MemPool used in turn with the default pool, then deleted) the pool is a guess the stream says so;
// a pool that had a free block for the segment's first allocation is not its pool (else no segment).
import { describe, expect, test } from 'vitest';
import type { SnapshotSegment } from '../../src/trace/snapshot/snapshot';
import { PoolInference } from '../../src/trace/stream/pool-inference';

const MiB = 2 ** 20;
const D = 0x10000000; // a default-pool segment alive at the end
const P = 0x20000000; // a private pool's segment alive at the end
const X = 0x30000000; // a segment made and freed during the trace
const finalSegments = [
  { address: D, total_size: 20 * MiB, segment_pool_id: [0, 0] },
  { address: P, total_size: 20 * MiB, segment_pool_id: [1, 7] },
] as unknown as SnapshotSegment[];

/** Allocations on stream 0 in D (or P; `first` bytes of its 20 MiB), then one of `size` in X freed
 * again, then one in P (or D). */
function run(before: number, after: number, first = 20 * MiB, size = 4 * MiB) {
  const pools = new PoolInference(finalSegments);
  const column = new Int32Array(3).fill(-1);
  pools.segmentMade(before, 20 * MiB, 0, 0);
  column[0] = pools.alloc(before, first, 0, 1, 0);
  pools.segmentMade(X, 20 * MiB, 0, 2);
  column[1] = pools.alloc(X, size, 0, 3, 1);
  const gone = pools.segmentGone(X, 20 * MiB, 0, 4);
  pools.segmentMade(after, 20 * MiB, 0, 5);
  column[2] = pools.alloc(after, 4 * MiB, 0, 6, 2);
  pools.resolve(column, [[gone]]);
  return { pools, column };
}

describe('pool inference for a 2.11 trace', () => {
  test('a freed segment between allocations of one pool takes that pool, and nothing is guessed', () => {
    const { pools, column } = run(P, P);
    expect([...column]).toEqual([1, 1, 1]);
    expect(pools.guessed).toEqual([]);
  });
  test('between the default pool and a private one: the default, said to be a guess', () => {
    const { pools, column } = run(D, P);
    expect([...column]).toEqual([0, 0, 1]);
    expect(pools.guessed.map((g) => [g.addr, g.requests])).toEqual([[X, [1]]]);
  });
  test("between a private pool's allocations, where that pool had room for the first one: the other pool, no guess", () => {
    // P held 7 MiB of 20 when X was made for 13 MiB: the private pool would have served it.
    const { pools, column } = run(P, P, 7 * MiB, 13 * MiB);
    expect([...column]).toEqual([1, 0, 1]);
    expect(pools.guessed).toEqual([]);
    // 14 MiB did not fit there: the private pool it stays.
    expect([...run(P, P, 7 * MiB, 14 * MiB).column]).toEqual([1, 1, 1]);
  });
  test('a pool that made a segment while another had room is not that one\'s; a MemPool number missing at the end is a pool gone, and owns what no live pool can', () => {
    // MemPools (0, 1) and (0, 3) at the end: (0, 2) went away. X is made first; then the default pool and
    // (0, 1) each make a segment for 5 MiB while X has 18 MiB free; X is freed, then (0, 3) is made.
    const A = 0x40000000;
    const C = 0x50000000;
    const pools = new PoolInference([
      { address: D, total_size: 20 * MiB, segment_pool_id: [0, 0] },
      { address: A, total_size: 20 * MiB, segment_pool_id: [0, 1] },
      { address: C, total_size: 20 * MiB, segment_pool_id: [0, 3] },
    ] as unknown as SnapshotSegment[]);
    const column = new Int32Array(4).fill(-1);
    pools.segmentMade(X, 20 * MiB, 0, 0);
    column[0] = pools.alloc(X, 2 * MiB, 0, 1, 0);
    pools.segmentMade(D, 20 * MiB, 0, 2);
    column[1] = pools.alloc(D, 5 * MiB, 0, 3, 1);
    pools.segmentMade(A, 20 * MiB, 0, 4);
    column[2] = pools.alloc(A, 5 * MiB, 0, 5, 2);
    pools.freed(X);
    const gone = pools.segmentGone(X, 20 * MiB, 0, 6);
    pools.segmentMade(C, 20 * MiB, 0, 7);
    column[3] = pools.alloc(C, 4 * MiB, 0, 8, 3);
    pools.resolve(column, [[gone]]);
    const named = [...column].map((k) => pools.pools[k]);
    expect(named).toEqual([[0, 2], [0, 0], [0, 1], [0, 3]]);
    expect(pools.gone).toEqual(new Set([pools.pools.findIndex((p) => p[1] === 2)]));
    expect(pools.guessed).toEqual([]);
  });
});
