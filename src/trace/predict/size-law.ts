// How one allocation's size follows the program's size (a batch, a sequence length): the lowest-degree
// polynomial through the recorded points that reproduces every one of them (constant, linear, or with
// three recordings or more quadratic, where attention's sequence x sequence scores need it), within the
// allocator's own granularity. A size that no such law reproduces is "not clean": it is taken between
// the nearest recorded points, and said.

/** Requests within this many bytes of each other take the same block (PyTorch rounds to 512 B). */
const TOLERANCE = 512;

export type LawDegree = 0 | 1 | 2;

export interface SizeLaw {
  /** The polynomial's degree, or null when none up to 2 reproduces the points. */
  degree: LawDegree | null;
  /** Bytes at `size`. */
  at(size: number): number;
}

/** Lagrange's polynomial through `points` ([size, bytes]), evaluated at `x`. */
function through(points: readonly (readonly [number, number])[], x: number): number {
  let sum = 0;
  for (let i = 0; i < points.length; i++) {
    let term = points[i]![1];
    for (let j = 0; j < points.length; j++) if (j !== i) term *= (x - points[j]![0]) / (points[i]![0] - points[j]![0]);
    sum += term;
  }
  return sum;
}

const bytes = (v: number): number => Math.max(0, Math.round(v));

/** The law of `points` ([size, bytes], one per recording, sizes distinct), sorted by size or not. */
export function sizeLaw(points: readonly (readonly [number, number])[]): SizeLaw {
  const sorted = [...points].sort((a, b) => a[0] - b[0]);
  if (sorted.every((p) => p[1] === sorted[0]![1])) return { degree: 0, at: () => sorted[0]![1] };
  // Degree 1 through the ends, then 2 through the ends and the middle: the first that reproduces all.
  const candidates: [LawDegree, (readonly [number, number])[]][] = [[1, [sorted[0]!, sorted.at(-1)!]]];
  if (sorted.length >= 3) candidates.push([2, [sorted[0]!, sorted[sorted.length >> 1]!, sorted.at(-1)!]]);
  for (const [degree, basis] of candidates) {
    if (sorted.every(([x, y]) => Math.abs(through(basis, x) - y) <= TOLERANCE)) return { degree, at: (x) => bytes(through(basis, x)) };
  }
  // No clean law: between the two recorded points around the size (or the two nearest, beyond them).
  return {
    degree: null,
    at(x) {
      let k = sorted.findIndex((p) => p[0] >= x);
      if (k === -1) k = sorted.length - 1;
      else if (k === 0) k = 1;
      return bytes(through([sorted[k - 1]!, sorted[k]!], x));
    },
  };
}
