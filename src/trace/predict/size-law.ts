// How one allocation's size follows the program's size (a batch, a sequence length): the lowest-degree
// polynomial through the recorded points that reproduces every one of them (constant, linear, or with
// three recordings or more quadratic, where attention's sequence x sequence scores need it), within the
// allocator's own granularity. Two points alone fit any line, so there the law with fewer free numbers
// wins: points on c * size^2 (an image's side, a sequence's scores) are taken as that square rather than
// as the line through them, which would put a 128-pixel image's activations at a quarter of theirs. A size that no such law reproduces is "not clean": it is taken between
// the nearest recorded points, and said. The points are (xs[k], ys[k]) for k < n, xs ascending: a
// prediction holds every allocation's points in one typed array and asks these without allocating.

/** Requests within this many bytes of each other take the same block (PyTorch rounds to 512 B). */
const TOLERANCE = 512;

export type LawDegree = 0 | 1 | 2;

/** Degree of a law no polynomial up to 2 reproduces. */
export const UNCLEAN = 3;

/** Lagrange's polynomial through points a, b (and c unless it is -1) of xs/ys, at `x`. */
function through(xs: ArrayLike<number>, ys: ArrayLike<number>, a: number, b: number, c: number, x: number): number {
  const xa = xs[a]!;
  const xb = xs[b]!;
  if (c < 0) return ys[a]! * ((x - xb) / (xa - xb)) + ys[b]! * ((x - xa) / (xb - xa));
  const xc = xs[c]!;
  return (
    ys[a]! * ((x - xb) / (xa - xb)) * ((x - xc) / (xa - xc)) +
    ys[b]! * ((x - xa) / (xb - xa)) * ((x - xc) / (xb - xc)) +
    ys[c]! * ((x - xa) / (xc - xa)) * ((x - xb) / (xc - xb))
  );
}

/** Whether two points lie on c * x^2 (through the origin), within the allocator's granularity, and
 * closer than on c * x (a few hundred bytes are within the granularity of both). */
function squareFits(xs: ArrayLike<number>, ys: ArrayLike<number>): boolean {
  const r = xs[1]! / xs[0]!;
  const off = Math.abs(ys[0]! * r * r - ys[1]!);
  return ys[0]! > 0 && off <= TOLERANCE && off < Math.abs(ys[0]! * r - ys[1]!);
}

/** The lowest degree whose law reproduces all n points: 0, 1 (through the ends), 2 (through the ends
 * and the middle, with three points or more; with two, c * x^2 through both), else UNCLEAN. */
export function lawDegree(xs: ArrayLike<number>, ys: ArrayLike<number>, n: number): LawDegree | typeof UNCLEAN {
  let constant = true;
  for (let k = 1; k < n && constant; k++) constant = ys[k] === ys[0];
  if (constant) return 0;
  const fits = (c: number): boolean => {
    for (let k = 0; k < n; k++) if (Math.abs(through(xs, ys, 0, n - 1, c, xs[k]!) - ys[k]!) > TOLERANCE) return false;
    return true;
  };
  if (n === 2 && squareFits(xs, ys)) return 2;
  if (fits(-1)) return 1;
  if (n >= 3 && fits(n >> 1)) return 2;
  return UNCLEAN;
}

/** Bytes at `x` by the law of `degree` through the n points (UNCLEAN: between the two recorded points
 * around x, or the two nearest beyond them). */
export function lawAt(degree: LawDegree | typeof UNCLEAN, xs: ArrayLike<number>, ys: ArrayLike<number>, n: number, x: number): number {
  let v: number;
  if (degree === 0) v = ys[0]!;
  else if (degree === 1) v = through(xs, ys, 0, n - 1, -1, x);
  else if (degree === 2) v = n === 2 ? ys[0]! * (x / xs[0]!) ** 2 : through(xs, ys, 0, n - 1, n >> 1, x);
  else {
    let k = 1;
    while (k < n - 1 && xs[k]! < x) k++;
    v = through(xs, ys, k - 1, k, -1, x);
  }
  return Math.max(0, Math.round(v));
}

/** How far apart in ratio a law's points may fall from the laws taken here (a size unchanged, in
 * proportion, or as its square), for two allocations to be taken as one: a library's rounding, a
 * padded shape, a workspace that grows unevenly stay in; another allocation, mostly, does not. */
const SLACK = 1.25;

/** Whether `a` bytes at size `xa` and `b` bytes at `xb` can be one allocation of the program: b/a lies
 * between the ratios a constant, a line through 0 and a square give, within SLACK. */
export function couldFollow(a: number, xa: number, b: number, xb: number): boolean {
  if (a === b) return true;
  const q = xb / xa;
  const lo = Math.min(1, q * q);
  const hi = Math.max(1, q * q);
  return b >= (a * lo) / SLACK && b <= a * hi * SLACK;
}

export interface SizeLaw {
  /** The polynomial's degree, or null when none up to 2 reproduces the points. */
  degree: LawDegree | null;
  /** Bytes at `size`. */
  at(size: number): number;
}

/** The law of `points` ([size, bytes], one per recording, sizes distinct), sorted by size or not. */
export function sizeLaw(points: readonly (readonly [number, number])[]): SizeLaw {
  const sorted = [...points].sort((a, b) => a[0] - b[0]);
  const xs = sorted.map((p) => p[0]);
  const ys = sorted.map((p) => p[1]);
  const degree = lawDegree(xs, ys, sorted.length);
  return { degree: degree === UNCLEAN ? null : degree, at: (x) => lawAt(degree, xs, ys, sorted.length, x) };
}
