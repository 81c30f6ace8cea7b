// One rule for every verdict: a setting helps only where it avoids the first OOM or moves it later.
// PyTorch raises at the first OOM, so settings that first fail at the same request tie, whatever a
// replay that goes on past it counts after (more OOMs, another peak), and the config the user has is the
// one to keep. Checked on one tied run across the tuning guide, the sweep's suggestion, the comparison
// sentence and explain's fixes.
import { expect, test } from 'vitest';
import { parseAllocConf } from '../../src/allocator/config-parser';
import type { Capacity } from '../../src/allocator/capacity';
import { explainRun } from '../../src/trace/explain/explain';
import { stacksOfKeys } from '../../src/trace/measures/allocation-stacks';
import { replay } from '../../src/trace/replay/replay';
import { RequestStreamBuilder } from '../../src/trace/stream/request-stream';
import { adviseMaxSplit } from '../../src/trace/sweep/sweep-advice';
import { configRow, sweepRow } from '../../src/trace/sweep/sweep';
import { guideCandidates, tuningGuide } from '../../src/trace/sweep/tuning-guide';
import { compareRuns, runFigures, tiedAtFirstOom } from '../../src/trace/sweep/rank-runs';
import { comparisonSentence } from '../../src/views/compare-figures';
import type { CompareRun } from '../../src/worker/replay-protocol';

const MiB = 2 ** 20;
const CAP: Capacity = { kind: 'fraction', bytes: 1024 * MiB };
const whole = { requests: 0, endsAtOom: null, beganMidRun: false };

/** Blocks of mixed sizes, some freed (the configs cache and split them differently), then a 2 GiB
 * request no config can serve under a 1 GiB cap, then more blocks the configs fare differently with. */
function tiedRun() {
  const b = new RequestStreamBuilder();
  const ids: [number, number][] = [];
  for (let k = 0; k < 12; k++) {
    const id = b.newId();
    const size = (k % 3 === 0 ? 37 : k % 3 === 1 ? 90 : 13) * MiB + 512 * k;
    b.alloc(id, size, 0);
    ids.push([id, size]);
  }
  for (const [id, size] of ids.filter((_, k) => k % 2 === 0)) b.free(id, size, 0);
  b.alloc(b.newId(), 2048 * MiB, 0);
  for (let k = 0; k < 8; k++) b.alloc(b.newId(), (70 + 11 * k) * MiB, 0);
  const stream = b.finish();
  return { ...stream, notes: [] };
}

test('settings that first fail at the same request tie, in every verdict', () => {
  const stream = tiedRun();
  const defaults = parseAllocConf('').config;
  const current = configRow(stream, defaults, null, CAP);
  const first = current.first_oom_request;
  expect(first).toBe(18);
  const facts = { largestRequest: 2048 * MiB, distinctSizes: 20, capacity: CAP, coverage: { ...whole, requests: stream.length } };
  const tried = guideCandidates(defaults, 64, facts).map((c) => ({ kind: c.kind, row: configRow(stream, c.config, null, CAP) }));
  // The run is tied at its first OOM under every setting, and the replays differ after it (the old
  // ranking, which counted the OOMs and the peak past the first, had a winner).
  expect(tried.every((t) => t.row.first_oom_request === first)).toBe(true);
  expect(new Set([current, ...tried.map((t) => t.row)].map((r) => `${r.num_ooms} ${r['reserved_bytes.all.peak']}`)).size).toBeGreaterThan(1);
  expect(tiedAtFirstOom([current, ...tried.map((t) => t.row)])).toBe(true);
  for (const t of tried) expect(compareRuns(t.row, current)).toBe(0);

  // The tuning guide: no "helps here" badge, and the verdict says the tie.
  const guide = tuningGuide(current, tried, facts);
  expect(guide.items.map((i) => i.badge)).toEqual(guide.items.map(() => 'not for this run'));
  expect(guide.verdict).toMatch(/^Every setting tried runs out at the same request as the defaults \(OOM at request 18\), where PyTorch raises: none helps, a tie\. Keep the defaults/);

  // The sweep's suggestion: no setting "gets furthest"; the default is kept.
  const rows = [null, 64, 128, 256, 512].map((mb) => sweepRow(stream, defaults, null, mb, CAP));
  const advice = adviseMaxSplit(rows, 2048 * MiB, facts.coverage)!;
  expect(advice.best.max_split_size_mb).toBeNull();
  expect(advice.reason).toMatch(/^No max_split_size_mb setting avoids the OOM or moves it: each one swept runs out at the same request \(OOM at request 18\), where PyTorch raises\. A tie: keep the default/);
  expect(advice.reason).not.toMatch(/gets furthest/);

  // The comparison sentence.
  const run = (conf: string): CompareRun => {
    const r = replay(stream, { config: parseAllocConf(conf).config, addresses: 'simulated', capacity: CAP, statsOnly: true });
    return { conf, stats: r.stats, firstOom: r.ooms[0]?.request ?? null, peakReserved: r.stats['reserved_bytes.all.peak']!, timeline: undefined as never, view: undefined as never };
  };
  const compared = ['', 'expandable_segments:True', 'max_split_size_mb:256'].map(run);
  expect(compared.map((r) => runFigures(r.stats, r.firstOom).first_oom_request)).toEqual([18, 18, 18]);
  const sentence = comparisonSentence(compared, facts.coverage);
  expect(sentence).toBe('Every config compared runs out at the same request (OOM at request 18), where PyTorch raises: a tie, none gets further. Keep (defaults), the config you started from.');

  // explain: no fix is listed that does not avoid the OOM or move it.
  const e = explainRun(stream, undefined, stacksOfKeys({ keyOf: new Int32Array(stream.idCount).fill(-1), lists: [] }), { config: defaults, capacity: CAP });
  expect(e.fixes.filter((f) => f.kind === 'setting')).toEqual([]);
});
