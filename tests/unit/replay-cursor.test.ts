// A replay cursor moved forward and back, from checkpoints or not, gives the state a replay stopped
// there gives: the stats, and every segment and block where they are.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import type { CachingAllocator } from '../../src/allocator/caching-allocator';
import { CHECKPOINT_COPIERS, replay, ReplayCursor } from '../../src/trace/replay/replay';
import { planSnapshotReplay, type SnapshotReplayOptions } from '../../src/trace/replay/replay-snapshot';
import { memoryLayout } from '../../src/trace/measures/memory-layout';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';

/** What a view shows of the allocator: stats, largest free block, the layout's columns. */
function stateOf(a: CachingAllocator): unknown {
  const layout = memoryLayout(a, (id) => id, []);
  return { stats: a.memoryStats(), largest: a.largestFreeBlock(), layout: Object.entries(layout).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v]) };
}

const CASES: [string, SnapshotReplayOptions][] = [
  ['transformer-s1__default.pickle.gz', { conf: 'expandable_segments:True', capacity: { kind: 'fraction', bytes: 5 * 2 ** 30 }, emptyCacheAfter: [3000, 9000] }],
  ['random-s1__default.pickle.gz', { conf: 'max_split_size_mb:64,garbage_collection_threshold:0.7', capacity: { kind: 'fraction', bytes: 3 * 2 ** 30 } }],
  ['real/graphs.pickle.gz', {}], // private pools and their release
  ['real/prefetch__default.pickle.gz', {}], // deferred frees
  ['real/ring__default.pickle.gz', { conf: 'max_split_size_mb:128' }], // a trace begun mid-run
];

test.each(CASES)('%s: forward and back, the cursor equals a replay stopped at the same request', (file, options) => {
  const snapshot = decodeSnapshotFile(readFileSync(`tests/fixtures/${file}`));
  const plan = planSnapshotReplay(snapshot, options);
  const n = plan.stream.length;
  // Small checkpoint spacing, so that the moves below cross many checkpoints and go back to them.
  const every = Math.max(64, Math.floor(n / 40));
  const cursor = new ReplayCursor(plan.stream, plan.replayOptions, every);
  const fresh = new ReplayCursor(plan.stream, plan.replayOptions, n + 1); // never checkpoints
  const at = [0, 10, Math.floor(n * 0.3), Math.floor(n * 0.3) + 1, n - 1, Math.floor(n * 0.1), every, every - 1, every * 3 + 7, Math.floor(n * 0.7), 5, n - 1, Math.floor(n * 0.5)];
  for (const i of at) {
    const want = stateOf(replay(plan.stream, { ...plan.replayOptions, until: i, statsOnly: true }).allocator);
    expect([i, stateOf(cursor.at(i))]).toEqual([i, want]);
    expect([i, stateOf(fresh.at(i))]).toEqual([i, want]);
  }
});

test('warm() makes every checkpoint ahead in slices; then a move back replays no more than the spacing', () => {
  const snapshot = decodeSnapshotFile(readFileSync('tests/fixtures/transformer-s1__default.pickle.gz'));
  const plan = planSnapshotReplay(snapshot, {});
  const cursor = new ReplayCursor(plan.stream, plan.replayOptions, 1000);
  let calls = 0;
  while (!cursor.warm(1500)) calls++;
  expect(calls).toBeGreaterThanOrEqual(10);
  const want = stateOf(replay(plan.stream, { ...plan.replayOptions, until: 15_432, statsOnly: true }).allocator);
  expect(stateOf(cursor.at(15_432))).toEqual(want);
  expect(stateOf(cursor.at(3_210))).toEqual(stateOf(replay(plan.stream, { ...plan.replayOptions, until: 3_210, statsOnly: true }).allocator));
});

test('checkpoints hold at most their budget of blocks, spaced by their size; seeks between equal a replay', () => {
  const snapshot = decodeSnapshotFile(readFileSync('tests/fixtures/transformer-s1__default.pickle.gz'));
  const plan = planSnapshotReplay(snapshot, {});
  const n = plan.stream.length;
  // A boundary every 64 requests, where the state holds 90-143 blocks: all of them would hold ~37k.
  const budget = 10_000;
  const cursor = new ReplayCursor(plan.stream, plan.replayOptions, 64, budget);
  while (!cursor.warm(5000));
  const { checkpoints, blocks } = cursor.checkpointsHeld;
  expect(blocks).toBeLessThanOrEqual(budget);
  expect(blocks).toBeGreaterThan(budget / 2);
  expect(checkpoints).toBeGreaterThan(budget / 2 / 143);
  for (const i of [n - 1, 9_999, 130, 17_001, 64 * 7, 3]) {
    expect([i, stateOf(cursor.at(i))]).toEqual([i, stateOf(replay(plan.stream, { ...plan.replayOptions, until: i, statsOnly: true }).allocator)]);
  }
});

test.each(CASES)('%s: a visit partway through a whole replay sees the state a replay stopped there leaves, and the rest runs on unchanged', (file, options) => {
  const snapshot = decodeSnapshotFile(readFileSync(`tests/fixtures/${file}`));
  const plan = planSnapshotReplay(snapshot, options);
  const n = plan.stream.length;
  const whole = replay(plan.stream, plan.replayOptions);
  for (const after of [0, Math.floor(n * 0.4), n - 1]) {
    let seen: unknown = null;
    let oomsSeen = -1;
    const result = replay(plan.stream, plan.replayOptions, {
      after,
      see: (allocator, ooms) => {
        seen = stateOf(allocator);
        oomsSeen = ooms.length;
      },
    });
    const stopped = replay(plan.stream, { ...plan.replayOptions, until: after });
    expect([after, seen]).toEqual([after, stateOf(stopped.allocator)]);
    expect(oomsSeen).toBe(stopped.ooms.length);
    expect(result.stats).toEqual(whole.stats);
    expect(Array.from(result.series.reserved)).toEqual(Array.from(whole.series.reserved));
    expect(result.events.length).toBe(whole.events.length);
  }
});

/** Classes (by name) of the objects reachable from `roots` that CHECKPOINT_COPIERS has no copier for. */
function classesWithoutCopier(roots: object[]): string[] {
  const seen = new Set<object>();
  const missing = new Set<string>();
  const todo = [...roots];
  while (todo.length > 0) {
    const o = todo.pop()!;
    if (seen.has(o) || Object.isFrozen(o) || ArrayBuffer.isView(o)) continue;
    seen.add(o);
    const proto = Object.getPrototypeOf(o) as object | null;
    const plain = Array.isArray(o) || o instanceof Map || o instanceof Set || proto === Object.prototype || proto === null;
    if (!plain && !CHECKPOINT_COPIERS.has(proto!)) missing.add((proto as { constructor: { name: string } }).constructor.name);
    const children = o instanceof Map ? [...o.keys(), ...o.values()] : o instanceof Set ? [...o] : Object.values(o);
    for (const v of children) if (typeof v === 'object' && v !== null) todo.push(v as object);
  }
  return [...missing].sort();
}

test.each(CASES)('%s: every class a checkpoint copies has a copier, so restored runs keep the hidden classes of fresh ones', (file, options) => {
  const plan = planSnapshotReplay(decodeSnapshotFile(readFileSync(`tests/fixtures/${file}`)), options);
  for (const addresses of ['recorded', 'simulated'] as const) {
    const { allocator, events } = replay(plan.stream, { ...plan.replayOptions, addresses, statsOnly: true });
    expect(classesWithoutCopier([allocator, events])).toEqual([]);
  }
});
