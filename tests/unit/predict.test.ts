// Size prediction on real recordings of one program at three sizes (tests/fixtures/job: a small Llama
// trained 4 steps at batches 4, 8 and 12): predicted from two of them, the third's run replays to the
// real one's peaks and cudaMalloc count, and its requests are the real ones; the laws, the largest size
// that fits, and what the CLI prints.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { commonSubsequence } from '../../src/lib/diff';
import { allocationStacks } from '../../src/trace/measures/allocation-stacks';
import { largestFit } from '../../src/trace/predict/largest-fit';
import type { LayoutVerdict } from '../../src/trace/predict/address-layouts';
import { bandAnswer, edgeText } from '../../src/trace/predict/size-fit';
import { SizePredictor, type SizedRecording } from '../../src/trace/predict/predict-stream';
import { requestTokens, TokenDictionary } from '../../src/trace/predict/recording-tokens';
import { couldFollow, sizeLaw } from '../../src/trace/predict/size-law';
import { replay } from '../../src/trace/replay/replay';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind, type RequestStream } from '../../src/trace/stream/request-stream';

const JOB = 'tests/fixtures/job';
const BATCHES = [4, 8, 12];

function load(file: string, size: number): SizedRecording {
  const { snapshot, traces } = decodeSnapshotForReplay(gunzipSync(readFileSync(file)), { details: true });
  const stream = planSnapshotReplay(snapshot, { trace: traces[0]! }).stream;
  return { name: file.split('/').pop()!, size, stream, stacks: allocationStacks(stream, traces[0]!.details, snapshot) };
}
const ranks = BATCHES.map((b, r) => load(`${JOB}/rank_${r}.pickle.gz`, b));

function figures(stream: RequestStream): number[] {
  const { stats } = replay(stream, { config: DEFAULT_CONFIG, addresses: 'simulated', statsOnly: true });
  return [stats['reserved_bytes.all.peak']!, stats['allocated_bytes.all.peak']!, stats['num_device_alloc']!];
}

/** The share of the predicted stream's allocations that a real recording at that size aligns with and asks for within 512 B. */
function requestsReproduced(predicted: RequestStream, skeleton: SizedRecording, real: SizedRecording): number {
  const dictionary = new TokenDictionary();
  const a = requestTokens(predicted, skeleton.stacks, dictionary);
  const b = requestTokens(real.stream, real.stacks, dictionary);
  const match = commonSubsequence(a.length, b.length, (i, j) => a[i] === b[j]);
  let allocs = 0;
  let same = 0;
  for (let i = 0; i < a.length; i++) {
    if (predicted.kind[i] !== RequestKind.alloc) continue;
    allocs++;
    if (match[i]! >= 0 && Math.abs(predicted.size[i]! - real.stream.size[match[i]!]!) <= 512) same++;
  }
  return same / allocs;
}

describe('a run predicted from two recordings', () => {
  test.each([
    [0, 1, 2, 'beyond them (batch 12 from 4 and 8)'],
    [0, 2, 1, 'between them (batch 8 from 4 and 12)'],
    [1, 2, 0, 'below them (batch 4 from 8 and 12)'],
  ])('%i, %i -> %i: %s, replays to the real run', (a, b, t) => {
    const prediction = new SizePredictor([ranks[a]!, ranks[b]!]).at(BATCHES[t]!);
    expect(figures(prediction.stream)).toEqual(figures(ranks[t]!.stream));
    expect(prediction.aligned[0]!.share).toBeGreaterThan(0.95);
    const skeleton = ranks.find((r) => r.name === prediction.skeleton.name)!;
    // The rest: what a library's choice inserts at one size and not at another (1-3%).
    expect(requestsReproduced(prediction.stream, skeleton, ranks[t]!)).toBeGreaterThan(0.97);
    expect(prediction.extrapolation).toBe(t === 2 ? 1.5 : t === 0 ? 2 : null);
  });

  test('with three recordings the same, each allocation on the lowest-degree law that reproduces them', () => {
    const prediction = new SizePredictor(ranks).at(16);
    expect(prediction.laws.quadratic + prediction.laws.unclean).toBeLessThan(20);
    expect(prediction.laws.linear).toBeGreaterThan(1000);
    expect(prediction.extrapolation).toBeCloseTo(16 / 12);
  });

  test('recordings of two programs are refused with a clear message', () => {
    const other = load('tests/fixtures/real/oom__default.pickle.gz', 8);
    expect(() => new SizePredictor([ranks[0]!, other]).at(12)).toThrow(/do not look like one program at two sizes: only \d+% of their allocations match/);
    expect(() => new SizePredictor([ranks[0]!])).toThrow(/two sizes or more/);
    expect(() => new SizePredictor([ranks[0]!, { ...ranks[1]!, size: 4 }])).toThrow(/same size/);
  });
});

describe('sizeLaw', () => {
  test('constant, linear and quadratic where the points follow them, within 512 B', () => {
    expect(sizeLaw([[4, 1000], [8, 1000]]).degree).toBe(0);
    const linear = sizeLaw([[4, 4096], [8, 8192 + 300], [12, 12_288]]);
    expect([linear.degree, linear.at(16)]).toEqual([1, 16_384]);
    const quadratic = sizeLaw([[256, 256 ** 2 * 2], [512, 512 ** 2 * 2], [1024, 1024 ** 2 * 2]]);
    expect([quadratic.degree, quadratic.at(2048)]).toEqual([2, 2048 ** 2 * 2]);
  });
  test('two points on c * size^2 (an image side) are that square, not the line through them', () => {
    // deeplabv3 at sides 192 and 320: a stride-16 activation, 12^2 and 20^2 cells of 960 floats.
    const cell = 960 * 4;
    const square = sizeLaw([[192, 12 ** 2 * cell], [320, 20 ** 2 * cell]]);
    expect([square.degree, square.at(128), square.at(448)]).toEqual([2, 8 ** 2 * cell, 28 ** 2 * cell]);
    // A line through 0 that is within 512 B of the square too (small sizes) stays a line.
    expect(sizeLaw([[512, 256], [1024, 512]]).at(768)).toBe(384);
    // An offset line is a line.
    expect(sizeLaw([[4, 1000 + 4 * 4096], [8, 1000 + 8 * 4096]]).at(2)).toBe(1000 + 2 * 4096);
  });
  test('couldFollow: two allocations at two sizes can be one only where a constant, a line or a square could take one to the other', () => {
    expect(couldFollow(4096, 8, 4096, 16)).toBe(true);
    expect(couldFollow(4096, 8, 8192, 16)).toBe(true);
    expect(couldFollow(4096, 8, 16_384, 16)).toBe(true);
    expect(couldFollow(8192, 16, 4096, 8)).toBe(true);
    // A cuDNN workspace's neighbour 367x its size, or a tensor that shrinks as the batch grows: not one.
    expect(couldFollow(27_648, 192, 10_158_595, 320)).toBe(false);
    expect(couldFollow(614_400, 192, 400, 320)).toBe(false);
  });
  test('no clean law: between the nearest recorded points, never below 0', () => {
    const law = sizeLaw([[1, 100], [2, 9000], [3, 100], [4, 50_000]]);
    expect(law.degree).toBeNull();
    expect(law.at(2.5)).toBe(4550);
    expect(sizeLaw([[4, 4096], [8, 1024]]).at(100)).toBe(0);
  });
});

describe('largestFit', () => {
  test('bisects to the boundary, and looks past a failing size that a fitting one follows', () => {
    expect(largestFit((s) => s <= 23, 8, 1000).largest).toBe(23);
    // Near a cap a larger size can fit where a smaller one did not.
    const odd = largestFit((s) => s <= 20 || s === 22, 8, 1000);
    expect([odd.largest, odd.firstFailing]).toEqual([22, 23]);
    expect(largestFit(() => false, 8, 1000).largest).toBeNull();
    expect(largestFit(() => true, 8, 100)).toMatchObject({ largest: 100, firstFailing: null });
  });
});

describe('splitscope predict', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'splitscope-predict-'));
  const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/splitscope.mjs', ...args], { encoding: 'utf8' });
  const inputs = [`4:${JOB}/rank_0.pickle.gz`, `8:${JOB}/rank_1.pickle.gz`];
  beforeAll(() => {
    expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
  });

  test('--at prints replay --json for the predicted run, with the fit', () => {
    const r = cli('predict', ...inputs, '--at', '12', '--json');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    const real = JSON.parse(cli('replay', `${JOB}/rank_2.pickle.gz`, '--addresses', 'simulated', '--json').stdout);
    for (const key of ['reserved_bytes.all.peak', 'allocated_bytes.all.peak', 'num_device_alloc']) expect([key, out.stats[key]]).toEqual([key, real.stats[key]]);
    expect(out.ooms).toEqual([]);
    expect(out.prediction).toMatchObject({ target: 12, skeleton: { name: 'rank_1.pickle.gz', size: 8 }, extrapolation: 1.5 });
    const text = cli('predict', ...inputs, '--at', '12').stdout;
    expect(text).toMatch(/^predicted: size 12, the requests of rank_1\.pickle\.gz \(size 8\)\naligned: {3}9\d\.\d% of the allocations with rank_0\.pickle\.gz/);
    expect(text).toMatch(/extrapolated: 1\.50x beyond the recorded sizes/);
    // Recorded with Python frames alone (stacks='python'): said, with what C++ frames would add.
    expect(r.stderr).toContain("note: The recordings have Python frames alone: the backward pass's allocations");
  });

  test('--fit finds the largest size whose predicted run fits the cap, per config side by side: that one fits, the next does not', () => {
    const r = cli('predict', ...inputs, '--fit', '--capacity', '1.7GB', '--json');
    expect(r.status).toBe(0);
    const { fit } = JSON.parse(r.stdout);
    // The recorded config (the defaults) and it with expandable_segments:True, the larger first in `fit`.
    expect(fit.by_conf.map((f: { conf: string }) => f.conf)).toEqual(['', 'expandable_segments:True']);
    expect(fit.largest).toBe(Math.max(...fit.by_conf.map((f: { largest: number }) => f.largest)));
    const ooms = (size: number, conf: string) => JSON.parse(cli('predict', ...inputs, '--at', String(size), '--conf', conf, '--capacity', '1.7GB', '--json').stdout).ooms.length;
    // The first size that runs out fits a cap of what it needs, and not one 2 MiB smaller.
    const oomsUnder = (size: number, conf: string, cap: number) => JSON.parse(cli('predict', ...inputs, '--at', String(size), '--conf', conf, '--capacity', String(cap), '--json').stdout).ooms.length;
    for (const f of fit.by_conf) {
      expect(f.largest).toBeGreaterThanOrEqual(8);
      expect(ooms(f.largest, f.conf)).toBe(0);
      expect(ooms(f.first_failing, f.conf)).toBeGreaterThan(0);
      expect(f.first_failing_needs).toBeGreaterThan(fit.capacity);
      expect(oomsUnder(f.first_failing, f.conf, f.first_failing_needs)).toBe(0);
      expect(oomsUnder(f.first_failing, f.conf, f.first_failing_needs - 2 * 2 ** 20)).toBeGreaterThan(0);
    }
    const [d, e] = fit.by_conf as [FitRow, FitRow];
    type FitRow = {
      largest: number;
      first_failing: number;
      first_failing_needs: number;
      first_failing_fits_without_cudnn_workspaces: boolean | null;
      largest_split: LayoutVerdict | null;
      first_failing_split: LayoutVerdict | null;
      largest_within_band: boolean | null;
      largest_band: number | null;
      largest_band_below: number | null;
      first_failing_band: number | null;
      first_failing_band_below: number | null;
      band_range: [number, number] | null;
      answer: string;
    };
    // Where the prediction's error band crosses the cap, the answer says so (never a bare size the band crosses).
    const band = (f: FitRow) =>
      bandAnswer({ largest: f.largest, firstFailing: f.first_failing, firstFailingNeeds: f.first_failing_needs, largestWithin: f.largest_within_band, largestBand: f.largest_band, largestBandBelow: f.largest_band_below, firstFailingBand: f.first_failing_band, firstFailingBandBelow: f.first_failing_band_below, bandRange: f.band_range }, fit.capacity);
    for (const f of fit.by_conf as FitRow[]) {
      expect(f.answer).toBe(`${f.largest}${band(f)}`);
      expect([f.largest_band, f.first_failing_band].every((b) => b !== null && b >= 0)).toBe(true);
      expect(f.largest_band_below!).toBeLessThanOrEqual(f.largest_band!);
      const crosses = f.first_failing_needs * (1 - f.first_failing_band_below!) <= fit.capacity || f.largest_within_band === true;
      expect(band(f) !== '').toBe(crosses || f.band_range !== null);
    }
    const esc = (t: string) => t.replace(/[.()±%+]/g, '\\$&');
    const after = (f: FitRow) =>
      edgeText({ largest: f.largest, firstFailing: f.first_failing, firstFailingNeeds: f.first_failing_needs, firstFailingFitsWithoutWorkspaces: f.first_failing_fits_without_cudnn_workspaces, largestSplit: f.largest_split, firstFailingSplit: f.first_failing_split }, fit.capacity).replace(/[.()]/g, '\\$&');
    expect(cli('predict', ...inputs, '--fit', '--capacity', '1.7GB').stdout).toMatch(
      new RegExp(`^largest size that fits under 1\\.58 GiB:\n  \\(defaults\\) +${esc(d.answer)}${after(d)}\n  expandable_segments:True +${esc(e.answer)}${after(e)}`),
    );
    // One config asked for: that one alone.
    expect(JSON.parse(cli('predict', ...inputs, '--fit', '--capacity', '1.7GB', '--conf', 'max_split_size_mb:64', '--json').stdout).fit.by_conf).toHaveLength(1);
  });

  test('--at says which cards the predicted run fits, each replayed under the card\'s memory', () => {
    // At batch 560 the 24 GB card holds less than the peak allocated, the 40 GB one runs out at a
    // request, the larger fit (the 80 GB one below the uncapped peak reserved: the allocator frees its cache first).
    const out = JSON.parse(cli('predict', ...inputs, '--at', '560', '--json').stdout);
    expect(out.needs.peak_reserved).toBe(out.stats['reserved_bytes.all.peak']);
    expect(out.needs.cards.map((c: { name: string; fits: boolean }) => [c.name, c.fits])).toEqual([['24 GB card', false], ['40 GB card', false], ['80 GB card', true], ['H200', true]]);
    expect(out.needs.cards[0].below_peak_allocated).toBe(true);
    expect(out.needs.cards[2].bytes).toBeLessThan(out.needs.peak_reserved);
    for (const c of out.needs.cards) {
      const capped = JSON.parse(cli('predict', ...inputs, '--at', '560', '--capacity', String(c.bytes), '--json').stdout);
      expect([c.name, c.fits]).toEqual([c.name, capped.ooms.length === 0]);
      if (!c.below_peak_allocated) expect([c.name, c.first_oom_request]).toEqual([c.name, capped.ooms[0]?.request ?? null]);
    }
  });

  test('--out writes the predicted run as a snapshot that replays to the same figures', () => {
    const out = join(tmp, 'predicted.pickle');
    const r = cli('predict', ...inputs, '--at', '12', '--out', out, '--json');
    expect(r.status).toBe(0);
    const again = JSON.parse(cli('replay', out, '--json').stdout);
    expect(again.stats['reserved_bytes.all.peak']).toBe(JSON.parse(r.stdout).stats['reserved_bytes.all.peak']);
  });

  test('mistakes are named: a recording without its size, one recording, --fit without a cap, two programs', () => {
    expect(cli('predict', `${JOB}/rank_0.pickle.gz`, inputs[1]!, '--at', '12')).toMatchObject({ status: 2, stderr: expect.stringMatching(/SIZE:FILE/) });
    expect(cli('predict', inputs[0]!, '--at', '12')).toMatchObject({ status: 2, stderr: expect.stringMatching(/two sizes or more/) });
    expect(cli('predict', ...inputs, '--fit')).toMatchObject({ status: 2, stderr: expect.stringMatching(/--fit needs --capacity/) });
    expect(cli('predict', ...inputs)).toMatchObject({ status: 2, stderr: expect.stringMatching(/either --at SIZE/) });
    expect(cli('predict', ...inputs, '--at', '12', '--conf', '', '--conf', 'expandable_segments:True')).toMatchObject({ status: 2, stderr: expect.stringMatching(/--at takes one --conf/) });
    expect(cli('replay', `${JOB}/rank_0.pickle.gz`, '--conf', '', '--conf', '')).toMatchObject({ status: 2, stderr: expect.stringMatching(/replay takes one --conf/) });
    expect(cli('predict', inputs[0]!, '8:tests/fixtures/real/llama__default.pickle.gz', '--at', '12')).toMatchObject({ status: 2, stderr: expect.stringMatching(/do not look like one program/) });
  });

  test('a recording that cannot be read or decoded is named, the first (read here) or a later one (on a worker thread)', () => {
    const cut = join(tmp, 'cut.pickle.gz');
    writeFileSync(cut, readFileSync(`${JOB}/rank_1.pickle.gz`).subarray(0, 3000));
    for (const args of [[inputs[0]!, `8:${cut}`], [`4:${cut}`, inputs[1]!]]) {
      const r = cli('predict', ...args, '--at', '12');
      expect([r.status, r.stderr]).toEqual([2, `splitscope: ${cut}: The gzip data is truncated: the file was cut off. Re-download or re-compress it.\n`]);
    }
    expect(cli('predict', inputs[0]!, `8:${tmp}/missing.pickle.gz`, '--at', '12')).toMatchObject({ status: 2, stderr: expect.stringMatching(/cannot read .*missing\.pickle\.gz: no such file/) });
  });
});
