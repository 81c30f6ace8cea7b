// Size prediction held against real programs run at every size (tests/fixtures/sizes: a transformers Llama
// by batch and by sequence length, torchvision's resnet50, timm's ViT-B/16; recorded on the device under
// the defaults, expandable_segments:True and max_split_size_mb:128, and under a cap). Each is predicted
// from two of its recordings (its 2nd and 4th sizes, under the defaults) and replayed under each config.
// The goals of issue 34: peak reserved within 3% inside the recorded range and 5% up to 2x beyond it,
// peak allocated within 1%, the cudaMalloc count within 5%; under a cap the real run's OOM verdict and
// its first OOM within 1% of the run's requests; `predict --fit` the largest size the program ran at.
import { describe, expect, test } from 'vitest';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { grouped } from '../../src/lib/grouped';
import { DRIVER_MODEL } from '../../src/trace/predict/address-layouts';
import { withoutCudnnWorkspaces } from '../../src/trace/predict/size-fit';
import { replay } from '../../src/trace/replay/replay';
import { accuracyRows, capRows, CONFS, fitRows, predictorOf, PROGRAMS, recordingOf, sizedRecordingOf, SIZES, type AccuracyRow } from './size-recordings';
import { SizePredictor } from '../../src/trace/predict/predict-stream';
import { BandMeter, peaksOf } from '../../src/trace/predict/prediction-band';

const name = (r: { program: string; size: number; conf: string }): string => `${r.program} at ${r.size} under ${r.conf || 'the defaults'}`;

describe('a run predicted from two recordings, against the real run at that size', () => {
  test('the recordings cover three programs at five sizes or more, batch and sequence length, three configs', () => {
    expect(PROGRAMS.length).toBeGreaterThanOrEqual(4);
    expect(new Set(SIZES.traces.map((t) => t.size_kind))).toEqual(new Set(['batch', 'sequence']));
    for (const p of PROGRAMS) expect(SIZES.sizes[p]!.length).toBeGreaterThanOrEqual(5);
  });

  const rows: AccuracyRow[] = accuracyRows();
  test.each(rows.map((r) => [name(r), r] as const))('%s', (_, r) => {
    const reservedGoal = r.beyond === 1 ? 3 : 5;
    expect(r.beyond).toBeLessThanOrEqual(2);
    const [reserved, allocated, cudaMalloc] = r.error.map(Math.abs);
    expect({ reserved: reserved! <= reservedGoal, allocated: allocated! <= 1, cudaMalloc: cudaMalloc! <= 5, ...r }).toMatchObject({ reserved: true, allocated: true, cudaMalloc: true });
  });

  // What a prediction cannot tell is which algorithm cuDNN picks for each convolution at a size never
  // recorded, and with it the workspace: with the workspaces left out on both sides, resnet50's predicted
  // runs replay as the real ones do, figure for figure, at every size and under every config.
  test.each(SIZES.sizes['resnet']!.map((size) => [size] as const))('resnet at %i without its cuDNN workspaces: the real run, to the byte', (size) => {
    const real = withoutCudnnWorkspaces(recordingOf('resnet', size).stream);
    const predicted = withoutCudnnWorkspaces(predictorOf('resnet').at(size).stream);
    expect(real.cudnnWorkspaces.size).toBeGreaterThan(300);
    for (const conf of CONFS) {
      const figures = (s: typeof real) => {
        const { stats } = replay(s, { config: parseAllocConf(conf).config, addresses: 'simulated', statsOnly: true });
        return ['reserved_bytes.all.peak', 'allocated_bytes.all.peak', 'num_device_alloc'].map((k) => stats[k]);
      };
      expect([conf, figures(predicted)]).toEqual([conf, figures(real)]);
    }
  });
});

// The error band (prediction-band.ts): measured on the recordings it is given, it holds the real run's
// peaks at the sizes it was not given, inside them and beyond; from two recordings it says what it could
// not measure.
describe('the prediction band holds the real peaks', () => {
  const defaults = parseAllocConf('').config;
  test.each(PROGRAMS.map((p) => [p] as const))('%s from its 2nd, 4th and 6th sizes, at its 1st, 3rd and 5th', (program) => {
    const sizes = SIZES.sizes[program]!;
    const given = [1, 3, 5].map((k) => sizes[k]!).filter((s) => s !== undefined);
    const predictor = new SizePredictor(given.map((s) => sizedRecordingOf(program, s)));
    const meter = new BandMeter(predictor, defaults);
    expect(meter.sources().filter((s) => s.kind === 'laws')).toHaveLength(given.length);
    for (const size of [0, 2, 4].map((k) => sizes[k]!)) {
      const p = predictor.at(size);
      const peaks = peaksOf(p.stream, defaults);
      const band = meter.bandAt(p, peaks);
      const real = peaksOf(recordingOf(program, size).stream, defaults);
      const inside = (v: number, [lo, hi]: [number, number]) => v >= lo && v <= hi;
      expect({ size, band: [band.reserved, band.allocated], reserved: inside(real.reserved, band.peakReserved), allocated: inside(real.allocated, band.peakAllocated) }).toMatchObject({ reserved: true, allocated: true });
      expect(band.unmeasured).toBe('');
    }
  });

  test('from two recordings, the laws\' error is said to be unmeasured', () => {
    const predictor = predictorOf('resnet');
    const p = predictor.at(40);
    const band = new BandMeter(predictor, defaults).bandAt(p, peaksOf(p.stream, defaults));
    expect(band.sources.map((s) => s.kind)).toEqual(['skeleton']);
    expect(band.unmeasured).toMatch(/beyond the recorded sizes is not measured \(it takes three recordings or more\)/);
  });
});

describe('under a cap', () => {
  const rows = capRows();
  test('some real runs ran out of memory under the cap and some did not', () => {
    expect(rows.some((r) => r.real !== null)).toBe(true);
    expect(rows.some((r) => r.real === null)).toBe(true);
  });
  test.each(rows.map((r) => [name(r), r] as const))('%s: the same verdict, the first OOM at the same request', (_, r) => {
    expect(r.predicted === null).toBe(r.real === null);
    if (r.real !== null) expect(Math.abs(r.predicted! - r.real)).toBeLessThanOrEqual(0.01 * r.requests);
  });
});

test('predict --fit finds the largest size the real program ran at under the cap (the next one ran out)', async () => {
  const rows = await fitRows();
  // Each program under the cap its sizes were recorded under, and under the others where the device's
  // search bracketed the largest size that fit (and the next one did not).
  expect(rows.length).toBeGreaterThanOrEqual(2 * PROGRAMS.length + 5);
  for (const r of rows) expect([r, r.predicted]).toEqual([r, r.real]);
  // Two of them rest on the address layouts: at the real largest, the predicted run fits at both
  // recordings' addresses and runs out where the driver model puts its segments, and --fit says so.
  const split = rows.filter((r) => r.largestSplit).map((r) => [`${r.program} under ${r.conf || 'the defaults'}, capped at ${grouped(Math.round(r.cap / 2 ** 20))} MiB`, r.largestSplit!.layouts.filter((l) => !l.fits).map((l) => l.name)]);
  expect(split).toEqual([
    ['resnet under the defaults, capped at 2,333 MiB', [DRIVER_MODEL]],
    ['vit under the defaults, capped at 2,424 MiB', [DRIVER_MODEL]],
  ]);
}, 120_000);
