// The recordings' own peak line beside a request-level prediction (trace/predict/peak-trend.ts): which
// one the peaks are taken from, and why.
import { expect, test } from 'vitest';
import { peakTrend, TRUSTED_RESIDUAL } from '../../src/trace/predict/peak-trend';

const GiB = 2 ** 30;
// Peaks on a line: 1 GiB + 0.25 GiB a unit of size (allocated 80% of reserved).
const on = (size: number) => ({ size, reserved: (1 + 0.25 * size) * GiB, allocated: 0.8 * (1 + 0.25 * size) * GiB });

test('inside the recorded sizes the request-level prediction is trusted, and the line is said beside it', () => {
  const t = peakTrend([on(4), on(8), on(16)], 12, { reserved: 4.4 * GiB, allocated: 3.2 * GiB }, 0.01, null);
  expect(t.reserved).toBeCloseTo(4 * GiB, -3);
  expect(t.residual).toBeCloseTo(0, 9);
  expect(t.reservedOff).toBeCloseTo(0.1, 6);
  expect(t).toMatchObject({ trusted: 'requests', why: expect.stringMatching(/^inside the recorded sizes/) });
});

test('beyond them a straight line the prediction leaves by more than its band is trusted', () => {
  const far = peakTrend([on(4), on(8), on(16)], 32, { reserved: 11 * GiB, allocated: 7.2 * GiB }, 0.03, 2);
  expect(far.reserved).toBeCloseTo(9 * GiB, -3);
  expect(far).toMatchObject({ trusted: 'trend', why: expect.stringMatching(/leaves it by 22\.2%, more than its error band/) });
  // Within the band: the prediction stands.
  expect(peakTrend([on(4), on(8), on(16)], 32, { reserved: 9.1 * GiB, allocated: 7.2 * GiB }, 0.03, 2).trusted).toBe('requests');
});

test('two recordings, or peaks off their line: the request-level prediction, and why', () => {
  const two = peakTrend([on(4), on(8)], 32, { reserved: 11 * GiB, allocated: 7.2 * GiB }, 0.03, 4);
  expect(two).toMatchObject({ residual: null, trusted: 'requests', why: expect.stringMatching(/two recordings cannot say/) });
  const bent = [on(4), { ...on(8), reserved: on(8).reserved * (1 + 4 * TRUSTED_RESIDUAL) }, on(16)];
  const t = peakTrend(bent, 32, { reserved: 11 * GiB, allocated: 7.2 * GiB }, 0.03, 2);
  expect(t.residual!).toBeGreaterThan(TRUSTED_RESIDUAL);
  expect(t).toMatchObject({ trusted: 'requests', why: expect.stringMatching(/stray up to/) });
});
