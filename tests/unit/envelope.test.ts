// The timeline's min/max-per-column envelope and its byte axis and key helpers.
import { expect, test } from 'vitest';
import { envelope, markerColumns } from '../../src/lib/envelope';

test('min and max per bucket are exact on known data', () => {
  const values = Float64Array.from([5, 1, 9, 3, 3, 3, 7, 2, 8, 0]);
  const env = envelope(values, 5);
  expect([...env.start]).toEqual([0, 2, 4, 6, 8, 10]);
  expect([...env.min]).toEqual([1, 3, 3, 2, 0]);
  expect([...env.max]).toEqual([5, 9, 3, 7, 8]);
});

test('uneven buckets tile the series and keep every extreme', () => {
  const n = 470_003;
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = (i * 7919) % 1000;
  values[123_457] = 1e9; // one spike
  values[400_001] = -5;
  const env = envelope(values, 1237);
  expect(env.min.length).toBe(1237);
  expect(env.start[0]).toBe(0);
  expect(env.start[1237]).toBe(n);
  for (let k = 0; k < 1237; k++) {
    const a = env.start[k]!;
    const b = env.start[k + 1]!;
    expect(b - a === 380 || b - a === 379 || b - a === 381).toBe(true);
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = a; i < b; i++) {
      lo = Math.min(lo, values[i]!);
      hi = Math.max(hi, values[i]!);
    }
    if (env.min[k] !== lo || env.max[k] !== hi) throw new Error(`bucket ${k}: ${env.min[k]}..${env.max[k]} != ${lo}..${hi}`);
  }
  expect(Math.max(...env.max)).toBe(1e9);
  expect(Math.min(...env.min)).toBe(-5);
});

test('length is bounded by the pixel width', () => {
  const values = new Float64Array(10_000).fill(1);
  for (const w of [1, 2, 99, 640, 1280.7, 9_999, 10_000, 20_000]) {
    expect(envelope(values, w).min.length).toBe(Math.min(10_000, Math.floor(w)));
  }
});

test('fewer points than columns: one bucket per point', () => {
  const values = Float64Array.from([4, 2, 6]);
  const env = envelope(values, 800);
  expect([...env.start]).toEqual([0, 1, 2, 3]);
  expect([...env.min]).toEqual([4, 2, 6]);
  expect([...env.max]).toEqual([4, 2, 6]);
});

test('empty series and zero width give no buckets', () => {
  expect(envelope(new Float64Array(0), 500).min.length).toBe(0);
  expect(envelope(Float64Array.from([1, 2]), 0).min.length).toBe(0);
  expect([...envelope(Float64Array.from([1, 2]), 0).start]).toEqual([2]); // start[length] = n
});

test('markers: one per pixel column, in order', () => {
  const ooms = Int32Array.from([900, 10, 11, 12, 500]);
  expect(markerColumns(ooms, (i) => i / 10)).toEqual([1, 50, 90]);
});
