// The timeline's path data: the same line as every column's point (a point left out lies on a
// horizontal run between the points kept either side of it), with far fewer vertices on flat series.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { envelope } from '../../src/lib/envelope';
import { areaPath, bandPath, seriesPaths } from '../../src/plot/timeline-paths';

const x = (i: number): number => i * 1.5;
const y = (v: number): number => 100 - v;
const points = (d: string): string[] => d.replace(/Z$/, '').split(/[ML]/).filter(Boolean);

/** Every column's point, none left out: the band before simplification. */
function fullBand(values: number[], columns: number): string[] {
  const env = envelope(values, columns);
  const xs = Array.from(env.min, (_, j) => x((env.start[j]! + env.start[j + 1]! - 1) / 2).toFixed(1));
  return [...xs.map((px, j) => `${px},${y(env.max[j]!).toFixed(1)}`), ...xs.map((px, j) => `${px},${y(env.min[j]!).toFixed(1)}`).reverse()];
}

/** `kept` is a subsequence of `all` with its ends, and each point left out has the y of the kept points around it. */
function sameLine(all: string[], kept: string[]): void {
  expect(kept[0]).toBe(all[0]);
  expect(kept.at(-1)).toBe(all.at(-1));
  let k = 0;
  for (let i = 0; i < all.length; i++) {
    if (all[i] === kept[k]) {
      k++;
      continue;
    }
    const yOf = (p: string): string => p.split(',')[1]!;
    expect(k).toBeGreaterThan(0);
    expect([yOf(kept[k - 1]!), yOf(kept[k]!)]).toEqual([yOf(all[i]!), yOf(all[i]!)]);
  }
  expect(k).toBe(kept.length);
}

test('a band is the line through every column, less the points inside horizontal runs', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 80 }), (values, columns) => {
      const d = bandPath(envelope(values, columns), x, y);
      expect(d.startsWith('M') && d.endsWith('Z')).toBe(true);
      sameLine(fullBand(values, columns), points(d));
    }),
  );
});

test('an area runs from zero along the maxima back down to zero, with the same points as the band top', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 80 }), (values, columns) => {
      const env = envelope(values, columns);
      const area = points(areaPath(env, x, y));
      const top = fullBand(values, columns).slice(0, env.min.length);
      expect(area[0]).toBe(`${x(0).toFixed(1)},${y(0).toFixed(1)}`);
      expect(area.at(-1)).toBe(`${x(values.length - 1).toFixed(1)},${y(0).toFixed(1)}`);
      sameLine(top, area.slice(1, -1));
    }),
  );
});

test('a flat series draws with four vertices, a sawtooth with every column', () => {
  expect(points(bandPath(envelope(new Array(10_000).fill(7), 700), x, y))).toHaveLength(4);
  const saw = Array.from({ length: 1400 }, (_, i) => i % 2);
  expect(points(bandPath(envelope(saw, 1400), x, y))).toHaveLength(2 * 1400);
});

test('the four series paths at once are the paths drawn one by one', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 9 })), { minLength: 1, maxLength: 200 }), fc.integer({ min: 1, max: 60 }), (rows, columns) => {
      const env = { reserved: envelope(rows.map((r) => r[0]), columns), active: envelope(rows.map((r) => r[1]), columns), allocated: envelope(rows.map((r) => r[2]), columns) };
      expect(seriesPaths(env, x, y)).toEqual({
        reservedArea: areaPath(env.reserved, x, y),
        reserved: bandPath(env.reserved, x, y),
        active: bandPath(env.active, x, y),
        allocated: bandPath(env.allocated, x, y),
      });
    }),
  );
});
