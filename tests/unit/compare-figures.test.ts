// The comparison's sentence: the config that gets furthest (no OOM, else the latest first OOM) with the
// least peak reserved; "avoids OOMs" only where the recording covers the whole run.
import { describe, expect, test } from 'vitest';
import type { Coverage } from '../../src/trace/replay/coverage';
import { comparisonSentence } from '../../src/views/compare-figures';
import type { CompareRun } from '../../src/worker/replay-protocol';

const GiB = 2 ** 30;
const run = (conf: string, peak: number, firstOom: number | null): CompareRun =>
  ({ conf, stats: { 'reserved_bytes.all.peak': peak, num_ooms: firstOom === null ? 0 : 1 }, firstOom }) as unknown as CompareRun;
const whole: Coverage = { requests: 1000, endsAtOom: null, beganMidRun: false };

describe('comparisonSentence', () => {
  test('names the config with no OOM and the least peak, against the first', () => {
    const s = comparisonSentence([run('', 13 * GiB, 400), run('max_split_size_mb:128', 30 * GiB, null), run('expandable_segments:True', 11.5 * GiB, null)], whole);
    expect(s).toBe('expandable_segments:True avoids OOMs, at 11.50 GiB peak reserved: 1.50 GiB less than (defaults), which has an OOM at request 400.');
  });

  test('says so when the first is already best', () => {
    expect(comparisonSentence([run('', 2 * GiB, null), run('expandable_segments:True', 3 * GiB, null)], whole)).toBe(
      '(defaults) avoids OOMs with the least peak reserved memory (2.00 GiB).',
    );
  });

  test('with OOMs everywhere, the latest first OOM wins even at a higher peak', () => {
    expect(comparisonSentence([run('a', 2 * GiB, 300), run('b', 3 * GiB, 800)], whole)).toBe(
      'b gets furthest (OOM at request 800), at 3.00 GiB peak reserved: 1024.00 MiB more than a, which has an OOM at request 300.', // PyTorch's format_size writes 1 GiB so
    );
  });

  test('on a recording that ends at its OOM, no verdict past its last request', () => {
    const dump: Coverage = { requests: 1000, endsAtOom: 998, beganMidRun: false };
    expect(comparisonSentence([run('', 6 * GiB, 998), run('expandable_segments:True', 5 * GiB, null)], dump)).toBe(
      'expandable_segments:True has no OOM through request 999, where the recording ends, at 5.00 GiB peak reserved: 1024.00 MiB less than (defaults), which has an OOM at request 998.',
    );
  });
});
