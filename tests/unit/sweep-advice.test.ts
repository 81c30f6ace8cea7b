// The sweep's suggestion: fewest OOMs, then least reserved memory, then least churn; the default on a tie.
import { expect, test } from 'vitest';
import { adviseMaxSplit } from '../../src/trace/sweep/sweep-advice';
import type { SweepRow } from '../../src/trace/sweep/sweep';

const row = (mb: number | null, reserved: number, ooms: number, allocs: number): SweepRow => ({
  max_split_size_mb: mb,
  conf: mb === null ? '' : `max_split_size_mb:${mb}`,
  'reserved_bytes.all.peak': reserved,
  'allocated_bytes.all.peak': reserved / 2,
  num_ooms: ooms,
  num_alloc_retries: 0,
  num_device_alloc: allocs,
  num_device_free: 0,
  largest_free_block_at_peak: 0,
  fragmentation_at_peak: 0,
});

test('fewest OOMs beat less memory; less memory beats less churn; the default wins a tie', () => {
  const rows = [row(20, 5e9, 0, 900), row(128, 4e9, 0, 300), row(512, 3e9, 2, 100), row(null, 6e9, 3, 50)];
  const advice = adviseMaxSplit(rows, 100 * 2 ** 20)!;
  expect(advice.best.max_split_size_mb).toBe(128);
  expect(advice.reason).toMatch(/max_split_size_mb:128 avoids OOM/);
  expect(advice.reason).toMatch(/unlimited reaches .* with 3 OOMs/);
  expect(advice.ruleOfThumb!.mb).toBe(128); // 1.2 x 100 MiB is nearest 128
  const tie = adviseMaxSplit([row(256, 4e9, 0, 10), row(null, 4e9, 0, 10)], 2 ** 20)!;
  expect(tie.best.max_split_size_mb).toBeNull();
  expect(tie.reason).toMatch(/^The default, unlimited,/);
});
