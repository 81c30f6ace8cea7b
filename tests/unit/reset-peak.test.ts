// torch.cuda.reset_peak_memory_stats() inserted into a replay: peaks start again from that moment.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';

test('after reset_peak_memory_stats, the peaks are the highest values since', () => {
  const snapshot = decodeSnapshotFile(readFileSync('tests/fixtures/transformer-s1__default.pickle.gz'));
  const capacity = { kind: 'fraction' as const, bytes: 6442450944 };
  const whole = replaySnapshot(snapshot, { capacity });
  const at = 15_000;
  const reset = replaySnapshot(snapshot, { capacity, resetPeakAfter: [at] });
  const { reserved, allocated } = reset.result.series;
  const maxFrom = (a: Float64Array): number => Math.max(...a.subarray(at));
  expect(reset.result.stats['reserved_bytes.all.peak']).toBe(maxFrom(reserved));
  expect(reset.result.stats['allocated_bytes.all.peak']).toBe(maxFrom(allocated));
  expect(reset.result.stats['reserved_bytes.all.peak']).toBeLessThan(whole.result.stats['reserved_bytes.all.peak']!);
  // Nothing but the peaks changes.
  for (const key of ['num_device_alloc', 'num_ooms', 'reserved_bytes.all.current', 'allocated_bytes.all.allocated']) {
    expect([key, reset.result.stats[key]]).toEqual([key, whole.result.stats[key]]);
  }
});
