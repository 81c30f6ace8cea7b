// A stats-only replay (the CLI's, a sweep's) decides exactly what a full one does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';

test('statsOnly keeps the stats, OOMs, peak and event count, and skips the log and series', () => {
  const file = join(__dirname, '../fixtures/transformer-s1__roundup_power2_divisions=4.pickle.gz');
  const snapshot = decodeSnapshotFile(new Uint8Array(readFileSync(file)));
  const capacity = { kind: 'fraction' as const, bytes: 6 * 1024 ** 3 };
  for (const conf of [undefined, 'max_split_size_mb:128,garbage_collection_threshold:0.6']) {
    const options = { capacity, ...(conf ? { conf } : {}) };
    const full = replaySnapshot(snapshot, options).result;
    const light = replaySnapshot(snapshot, { ...options, statsOnly: true }).result;
    expect(light.stats).toEqual(full.stats);
    expect(light.ooms).toEqual(full.ooms);
    expect(light.atPeak).toEqual(full.atPeak);
    expect(light.events.length).toBe(full.events.length);
    expect(light.series.allocated).toHaveLength(0);
    expect(full.events.length).toBeGreaterThan(30_000);
  }
});
