// The tuning guide's candidates and ranking, on made-up rows; its words reach no further than the recording.
import { describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import type { Coverage } from '../../src/trace/replay/coverage';
import type { SweepRow } from '../../src/trace/sweep/sweep';
import { guideCandidates, tuningGuide } from '../../src/trace/sweep/tuning-guide';

const GiB = 2 ** 30;
/** A row whose first OOM is at request 1000 + 100 * (ooms - 1), when it has any. */
const row = (conf: string, peak: number, ooms: number, churn = 10): SweepRow => ({
  max_split_size_mb: null,
  conf,
  'reserved_bytes.all.peak': peak,
  'allocated_bytes.all.peak': peak / 2,
  num_ooms: ooms,
  first_oom_request: ooms > 0 ? 1000 - 100 * ooms : null,
  num_alloc_retries: 0,
  num_device_alloc: churn,
  num_device_free: 0,
  largest_free_block_at_peak: 0,
  fragmentation_at_peak: 0.25,
});
const whole: Coverage = { requests: 2000, endsAtOom: null, beganMidRun: false };
const dump: Coverage = { requests: 1001, endsAtOom: 999, beganMidRun: false };
const facts = { largestRequest: GiB, distinctSizes: 147, capacity: { kind: 'fraction' as const, bytes: 6 * GiB }, coverage: whole };

describe('guideCandidates', () => {
  test('one change at a time on top of the current config; gc only under a cap', () => {
    const kinds = guideCandidates(DEFAULT_CONFIG, 1536, facts).map((c) => c.kind);
    expect(kinds).toEqual(['expandable', 'max_split', 'roundup', 'gc']);
    expect(guideCandidates(DEFAULT_CONFIG, null, { ...facts, capacity: null }).map((c) => c.kind)).toEqual(['expandable', 'roundup']);
  });
});

describe('tuningGuide', () => {
  test('what helps comes first: no OOM, then the later first OOM, before least memory', () => {
    const g = tuningGuide(row('', 6 * GiB, 3), [
      { kind: 'roundup', row: row('roundup_power2_divisions:4', 7 * GiB, 4) },
      { kind: 'expandable', row: row('expandable_segments:True', 5.5 * GiB, 0) },
      { kind: 'max_split', row: row('max_split_size_mb:1536', 5 * GiB, 1) },
    ], facts);
    expect(g.items.map((i) => [i.conf, i.helps, i.badge])).toEqual([
      ['expandable_segments:True', true, 'helps here'],
      ['max_split_size_mb:1536', true, 'helps here'],
      ['roundup_power2_divisions:4', false, 'not for this run'],
    ]);
    expect(g.verdict).toBe('Try expandable_segments:True first.');
    expect(g.items[0]!.figures).toMatch(/^peak reserved 5\.50 GiB \(−512\.00 MiB\), no OOM \(now OOM at request 700\)/);
    expect(g.items[1]!.why).toMatch(/does not cap request sizes/);
  });

  test('when nothing helps, it says the current config (even the default) is best here', () => {
    const g = tuningGuide(row('', 2 * GiB, 0), [{ kind: 'expandable', row: row('expandable_segments:True', 3 * GiB, 0) }], facts);
    expect(g.verdict).toMatch(/^Nothing here beats the defaults on this run: the default is not always the worst/);
  });

  test('on a recording that ends at its OOM it never says "helps here" nor "try it first": no OOM through the last recorded request', () => {
    const g = tuningGuide(row('', 6 * GiB, 1), [{ kind: 'expandable', row: row('expandable_segments:True', 5.5 * GiB, 0) }], { ...facts, coverage: dump });
    expect(g.items[0]!.helps).toBe(true);
    expect(g.items[0]!.badge).toBe('better in the recorded part');
    expect(g.items[0]!.figures).toContain('no OOM through request 1,000, where the recording ends (now OOM at request 900)');
    expect(g.verdict).not.toMatch(/Try|helps|avoids/);
    expect(g.verdict).toMatch(/^On the recorded requests expandable_segments:True does best \(no OOM through request 1,000, where the recording ends\)\. The recording ends at an OOM \(request 999\)/);
  });
});
