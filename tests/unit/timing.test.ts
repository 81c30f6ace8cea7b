// The benchmarks' marks and measures stay bounded however long the page runs.
import { expect, test } from 'vitest';
import { clearTimings, mark, measure } from '../../src/lib/timing';

test('each name keeps at most 500 marks or measures, the latest among them', () => {
  for (let i = 0; i < 1_234; i++) {
    mark('t:mark');
    measure('t:measure', performance.now());
  }
  const marks = performance.getEntriesByName('t:mark');
  expect(marks.length).toBeGreaterThan(0);
  expect(marks.length).toBeLessThanOrEqual(500);
  expect(performance.getEntriesByName('t:measure').length).toBeLessThanOrEqual(500);
  clearTimings();
  expect(performance.getEntriesByName('t:mark')).toEqual([]);
});
