// The comparison's sentence: the config that avoids OOMs (or has fewest) with the least peak reserved.
import { describe, expect, test } from 'vitest';
import { comparisonSentence } from '../../src/views/compare-figures';
import type { CompareRun } from '../../src/worker/replay-protocol';

const GiB = 2 ** 30;
const run = (conf: string, peak: number, ooms: number): CompareRun =>
  ({ conf, stats: { 'reserved_bytes.all.peak': peak, num_ooms: ooms } }) as unknown as CompareRun;

describe('comparisonSentence', () => {
  test('names the config with no OOM and the least peak, against the first', () => {
    const s = comparisonSentence([run('', 13 * GiB, 2), run('max_split_size_mb:128', 30 * GiB, 0), run('expandable_segments:True', 11.5 * GiB, 0)]);
    expect(s).toBe('expandable_segments:True avoids OOMs with 11.50 GiB peak reserved, 1.50 GiB less than (defaults), where (defaults) has 2 OOMs.');
  });

  test('says so when the first is already best', () => {
    expect(comparisonSentence([run('', 2 * GiB, 0), run('expandable_segments:True', 3 * GiB, 0)])).toBe(
      '(defaults) avoids OOMs with the least peak reserved memory (2.00 GiB).',
    );
  });

  test('with OOMs everywhere, the fewest win even at a higher peak', () => {
    expect(comparisonSentence([run('a', 2 * GiB, 3), run('b', 3 * GiB, 1)])).toBe(
      'b has the fewest OOMs (1) with 3.00 GiB peak reserved, 1024.00 MiB more than a, where a has 3 OOMs.', // PyTorch's format_size writes 1 GiB so
    );
  });
});
