// The size prediction judged on programs its rules were not written for (tests/fixtures/frameworks):
// each program predicted from its 2nd and 4th sizes, in each recording mode, at the other four. The
// error band must hold the real peaks wherever the target lies (inside the recorded sizes and up to 2x
// beyond); where a clean law exists the prediction must find it (the transformer programs exactly, the
// segmentation network by image side as the square of it).
import { describe, expect, test } from 'vitest';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { SizePredictor } from '../../src/trace/predict/predict-stream';
import { BandMeter, peaksOf } from '../../src/trace/predict/prediction-band';
import { FRAMEWORK_MODES, frameworkCapRows, frameworkFits, frameworkPrograms, frameworkRecordings } from './framework-recordings';

const DEFAULTS = parseAllocConf('').config;

describe.each(frameworkPrograms())('%s from its 2nd and 4th sizes', (program) => {
  test.each(FRAMEWORK_MODES)('%s mode: the band holds the real peaks at the 1st, 3rd, 5th and 6th', (mode) => {
    const all = frameworkRecordings(program, mode);
    const predictor = new SizePredictor([all[1]!, all[3]!]);
    const meter = new BandMeter(predictor, DEFAULTS);
    const rows = [0, 2, 4, 5].map((k) => {
      const p = predictor.at(all[k]!.size);
      const peaks = peaksOf(p.stream, DEFAULTS);
      const band = meter.bandAt(p, peaks);
      const real = peaksOf(all[k]!.stream, DEFAULTS);
      return {
        size: all[k]!.size,
        reserved: peaks.reserved / real.reserved - 1,
        allocated: peaks.allocated / real.allocated - 1,
        held: real.reserved >= band.peakReserved[0] && real.reserved <= band.peakReserved[1] && real.allocated >= band.peakAllocated[0] && real.allocated <= band.peakAllocated[1],
        // Below the prediction the band is no wider than above it, and narrower where allocations no law
        // tells make the peak (they lower it only by what they hold there, but may raise it by their size).
        sides: band.reservedBelow <= band.reserved && band.allocatedBelow <= band.allocated && band.librarySized >= band.librarySizedBelow,
      };
    });
    expect(rows.filter((r) => !r.held)).toEqual([]);
    expect(rows.filter((r) => !r.sides)).toEqual([]);
    if (program === 'trainer' || program === 'peft') for (const r of rows) expect([r.size, r.reserved, r.allocated]).toEqual([r.size, 0, 0]);
    if (program === 'segnet') {
      // 128 and 448 beyond 192 and 320: a line through the two would be 20% low at both.
      for (const r of rows.filter((x) => x.size === 128 || x.size === 448)) {
        expect(Math.abs(r.reserved), `reserved at ${r.size}`).toBeLessThan(0.03);
        expect(Math.abs(r.allocated), `allocated at ${r.size}`).toBeLessThan(0.03);
      }
    }
  });
});

describe('--fit on the held-out programs, from their 2nd and 4th sizes, under the cap their phase-2 runs ran under', () => {
  // The real largest size that fit, run three times at each size near the edge (MANIFEST fits). Phase 2 ran
  // on an H100, the recordings predicted from on an H200: cuDNN may pick other algorithms on the other
  // card, which no band measured on the recordings can know. deeplabv3 with C++ frames is the one it
  // shows in: 359 predicted (353-360 within the band of +4.7%/−3.2%), 336 to 351 real.
  const OTHER_CARD = new Set(['segnet default']);
  test('the answer is exact where it is bare, and the real largest lies among the sizes its band names', async () => {
    const fits = await frameworkFits();
    expect(fits.length).toBe(14);
    for (const f of fits) {
      const [lo, hi] = f.range;
      // The real largest is f.real or any untried size below f.realFails.
      const overlaps = lo <= (f.realFails ?? Infinity) - 1 && hi >= f.real;
      expect(overlaps, `${f.program} ${f.mode}: ${f.answer}; real ${f.real}${f.realFails ? ` (${f.realFails} runs out)` : ' (every size tried fit)'}`).toBe(!OTHER_CARD.has(`${f.program} ${f.mode}`));
    }
    for (const f of fits.filter((x) => x.program === 'trainer' || x.program === 'peft')) expect(f.predicted).toBe(f.real);
  });
});

describe('the verdict under a cap on the held-out programs, from their 2nd and 4th sizes', () => {
  test('the same OOM verdict as the real run at every size, but where a reduction kernel makes scratch the recordings lack', () => {
    const rows = frameworkCapRows();
    expect(rows.length).toBe(84);
    // sgd at 1536: its bias gradients' reduction splits across blocks there, with 64 MiB of scratch the
    // run at 1024 (the nearer recording) sizes otherwise; the prediction runs through, the real run does not.
    const differ = rows.filter((r) => (r.real === null) !== (r.predicted === null)).map((r) => `${r.program} ${r.mode} ${r.size}`);
    expect(differ).toEqual(['sgd python 1536', 'sgd default 1536']);
    // Where the peak follows clean laws, the first OOM comes at the real request (within 1% of the run).
    for (const r of rows.filter((x) => ['trainer', 'peft', 'segnet', 'convnet'].includes(x.program) && x.real !== null)) {
      expect(Math.abs(r.predicted! - r.real!) / r.requests, `${r.program} ${r.mode} ${r.size}`).toBeLessThanOrEqual(0.01);
    }
  });
});
