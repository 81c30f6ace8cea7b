// The timeline's series as SVG path data, from their per-column envelopes (lib/envelope.ts). Pure, so
// that Node tests check it. A point inside a horizontal run is left out: the line passes through it
// anyway, and each vertex costs the rasterizer a join. A reserved series is flat for most columns, so
// its band goes from ~1,500 vertices to a few dozen (on SwiftShader, stroking them was the largest part
// of a slider step's frame).
import type { Envelope } from '../lib/envelope';

/** Column j's x: the middle of its requests. */
function columnXs(env: Envelope, x: (i: number) => number): string[] {
  const k = env.min.length;
  const xs = new Array<string>(k);
  for (let j = 0; j < k; j++) xs[j] = x((env.start[j]! + env.start[j + 1]! - 1) / 2).toFixed(1);
  return xs;
}

function columnYs(values: ArrayLike<number>, y: (v: number) => number): string[] {
  const ys = new Array<string>(values.length);
  for (let j = 0; j < values.length; j++) ys[j] = y(values[j]!).toFixed(1);
  return ys;
}

/** The polyline through columns `from` to `to` (either way), its first point drawn with `first`, the
 * points inside horizontal runs left out. */
function polyline(parts: string[], xs: string[], ys: string[], from: number, to: number, first: 'M' | 'L'): void {
  const step = from <= to ? 1 : -1;
  for (let j = from; ; j += step) {
    const end = j === to;
    if (j === from || end || ys[j - step] !== ys[j] || ys[j + step] !== ys[j]) parts.push(`${j === from ? first : 'L'}${xs[j]},${ys[j]}`);
    if (end) return;
  }
}

/** A closed band through columns `xs`: along `top` left to right, back along `bottom`. */
function band(xs: string[], top: string[], bottom: string[]): string {
  const k = xs.length;
  if (k === 0) return '';
  const parts: string[] = [];
  polyline(parts, xs, top, 0, k - 1, 'M');
  polyline(parts, xs, bottom, k - 1, 0, 'L');
  return parts.join('') + 'Z';
}

/** The area under `top` down to `base`, from x0 to x1. */
function area(xs: string[], top: string[], x0: string, x1: string, base: string): string {
  if (xs.length === 0) return '';
  const parts = [`M${x0},${base}`];
  polyline(parts, xs, top, 0, xs.length - 1, 'L');
  parts.push(`L${x1},${base}Z`);
  return parts.join('');
}

/** A closed band: along the maxima left to right, back along the minima (a line where they agree). */
export function bandPath(env: Envelope, x: (i: number) => number, y: (v: number) => number): string {
  return band(columnXs(env, x), columnYs(env.max, y), columnYs(env.min, y));
}

/** The area under the maxima, down to zero. */
export function areaPath(env: Envelope, x: (i: number) => number, y: (v: number) => number): string {
  const k = env.min.length;
  if (k === 0) return '';
  return area(columnXs(env, x), columnYs(env.max, y), x(env.start[0]!).toFixed(1), x(env.start[k]! - 1).toFixed(1), y(0).toFixed(1));
}

/**
 * The timeline's four series paths (reserved's area and band, active's and allocated's bands). Their
 * envelopes share their columns (one series length, one width), so the columns' x and reserved's
 * maxima are formatted once, not once a path.
 */
export function seriesPaths(
  env: { reserved: Envelope; active: Envelope; allocated: Envelope },
  x: (i: number) => number,
  y: (v: number) => number,
): { reservedArea: string; reserved: string; active: string; allocated: string } {
  const r = env.reserved;
  const k = r.min.length;
  if (k === 0) return { reservedArea: '', reserved: '', active: '', allocated: '' };
  const xs = columnXs(r, x);
  const reservedTop = columnYs(r.max, y);
  return {
    reservedArea: area(xs, reservedTop, x(r.start[0]!).toFixed(1), x(r.start[k]! - 1).toFixed(1), y(0).toFixed(1)),
    reserved: band(xs, reservedTop, columnYs(r.min, y)),
    active: band(xs, columnYs(env.active.max, y), columnYs(env.active.min, y)),
    allocated: band(xs, columnYs(env.allocated.max, y), columnYs(env.allocated.min, y)),
  };
}
