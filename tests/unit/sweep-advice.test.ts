// The sweep's suggestion: no OOM, then the later first OOM, then least reserved memory, then least
// churn; the default on a tie. Its words reach no further than the recording.
import { expect, test } from 'vitest';
import { adviseMaxSplit } from '../../src/trace/sweep/sweep-advice';
import type { Coverage } from '../../src/trace/replay/coverage';
import type { SweepRow } from '../../src/trace/sweep/sweep';

const row = (mb: number | null, reserved: number, ooms: number, allocs: number): SweepRow => ({
  max_split_size_mb: mb,
  conf: mb === null ? '' : `max_split_size_mb:${mb}`,
  'reserved_bytes.all.peak': reserved,
  'allocated_bytes.all.peak': reserved / 2,
  num_ooms: ooms,
  first_oom_request: ooms > 0 ? 500 - ooms : null,
  num_alloc_retries: 0,
  num_device_alloc: allocs,
  num_device_free: 0,
  largest_free_block_at_peak: 0,
  fragmentation_at_peak: 0,
});
const whole: Coverage = { requests: 600, endsAtOom: null, beganMidRun: false };

test('no OOM beats less memory; a later first OOM beats an earlier one; less memory beats less churn; the default wins a tie', () => {
  const rows = [row(20, 5e9, 0, 900), row(128, 4e9, 0, 300), row(512, 3e9, 2, 100), row(null, 6e9, 3, 50)];
  const advice = adviseMaxSplit(rows, 100 * 2 ** 20, whole)!;
  expect(advice.best.max_split_size_mb).toBe(128);
  expect(advice.reason).toMatch(/^max_split_size_mb:128 does best: no OOM, /);
  expect(advice.reason).toMatch(/unlimited reaches .* with an OOM at request 497/);
  expect(advice.ruleOfThumb!.mb).toBe(128); // 1.2 x 100 MiB is nearest 128
  const allOom = adviseMaxSplit([row(256, 4e9, 2, 10), row(512, 9e9, 1, 10)], 2 ** 20, whole)!;
  expect(allOom.best.max_split_size_mb).toBe(512);
  expect(allOom.reason).toMatch(/^No max_split_size_mb setting avoids the OOM: each one swept runs out of memory\. max_split_size_mb:512 gets furthest \(OOM at request 499\)/);
  const tie = adviseMaxSplit([row(256, 4e9, 0, 10), row(null, 4e9, 0, 10)], 2 ** 20, whole)!;
  expect(tie.best.max_split_size_mb).toBeNull();
  expect(tie.reason).toMatch(/^The default, unlimited,/);
});

test('on a recording that ends at its OOM, "no OOM" reaches only to its last request', () => {
  const advice = adviseMaxSplit([row(128, 4e9, 0, 300), row(null, 6e9, 1, 50)], 2 ** 20, { requests: 500, endsAtOom: 499, beganMidRun: false })!;
  expect(advice.reason).toMatch(/^max_split_size_mb:128 does best: no OOM through request 499, where the recording ends,/);
  expect(advice.reason).not.toMatch(/avoids/);
});
