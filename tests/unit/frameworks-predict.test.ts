// The size prediction judged on programs its rules were not written for (tests/fixtures/frameworks):
// each program predicted from its 2nd and 4th sizes, in each recording mode, at the other four. The
// error band must hold the real peaks wherever the target lies (inside the recorded sizes and up to 2x
// beyond); where a clean law exists the prediction must find it (the transformer programs exactly, the
// segmentation network by image side as the square of it).
import { describe, expect, test } from 'vitest';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { SizePredictor } from '../../src/trace/predict/predict-stream';
import { BandMeter, peaksOf } from '../../src/trace/predict/prediction-band';
import { FRAMEWORK_MODES, frameworkPrograms, frameworkRecordings } from './framework-recordings';

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
      };
    });
    expect(rows.filter((r) => !r.held)).toEqual([]);
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
