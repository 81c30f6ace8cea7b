// A replay cursor moved forward and back gives the state a replay stopped there gives.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { replay, ReplayCursor } from '../../src/trace/replay/replay';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';

test('forward and back, the cursor equals a replay stopped at the same request', () => {
  const snapshot = decodeSnapshotFile(readFileSync('tests/fixtures/transformer-s1__default.pickle.gz'));
  const plan = planSnapshotReplay(snapshot, {
    conf: 'expandable_segments:True',
    capacity: { kind: 'fraction', bytes: 5 * 2 ** 30 },
    emptyCacheAfter: [3000, 9000],
  });
  const cursor = new ReplayCursor(plan.stream, plan.replayOptions);
  for (const at of [0, 10, 2999, 3000, 3001, 8000, 12_000, 500, 19_999, 19_999]) {
    const want = replay(plan.stream, { ...plan.replayOptions, until: at, statsOnly: true }).stats;
    expect([at, cursor.at(at).memoryStats()]).toEqual([at, want]);
  }
});
