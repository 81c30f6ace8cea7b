// splitscope stats prints the final state as PyTorch's own `python -m torch.cuda._memory_viz stats`
// does: its text, recorded by torch 2.11 for each fixture (tests/fixtures/memory-viz-stats.json), is
// matched character for character; the tables beside it add up to the same totals.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { freeBlocksBySize, pyFixed1, pyFormatSize, segmentsByPool, segmentSummary } from '../../src/trace/measures/segment-summary';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';
import { FIXTURES } from '../conformance/reference-traces';

const recorded: Record<string, { stdout: string; code: number }> = JSON.parse(readFileSync(join(FIXTURES, 'memory-viz-stats.json'), 'utf8'));

describe("memory_viz's stats text", () => {
  for (const [file, want] of Object.entries(recorded)) {
    test(file, () => {
      expect(want.code).toBe(0);
      // print() adds a newline after the returned text.
      expect(segmentSummary(decodeSnapshotFile(readFileSync(join(FIXTURES, file)))) + '\n').toBe(want.stdout);
    });
  }
});

test("Python's %.1f rounds exact ties to even", () => {
  expect([0.25, 0.35, 1.25, 2.5, 0.05, 1.15].map(pyFixed1)).toEqual(['0.2', '0.3', '1.2', '2.5', '0.1', '1.1']);
  expect(pyFormatSize(1.25 * 2 ** 20)).toBe('1.2MiB');
  expect(pyFormatSize(0)).toBe('0.0B');
  expect(pyFormatSize(1023)).toBe('1023.0B');
});

test('segments by pool and the free blocks add up to the segments', () => {
  const snapshot = decodeSnapshotFile(readFileSync(join(FIXTURES, 'real/compiled__default.pickle.gz')));
  const rows = segmentsByPool(snapshot);
  expect(rows.some((r) => r.pool !== 'default')).toBe(true);
  const total = snapshot.segments.reduce((a, s) => a + s.total_size, 0);
  expect(rows.reduce((a, r) => a + r.reserved, 0)).toBe(total);
  expect(rows.reduce((a, r) => a + r.allocated + r.pendingFree + r.freeBytes, 0)).toBe(total);
  const free = freeBlocksBySize(snapshot);
  expect(free.reduce((a, c) => a + c.bytes, 0)).toBe(rows.reduce((a, r) => a + r.freeBytes, 0));
});
