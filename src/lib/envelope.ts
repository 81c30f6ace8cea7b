// Min/max per pixel column: a 470k-point series drawn as one path of at most 2 x width points, which
// keeps every spike (an OOM peak, a brief reserved jump) visible where plain decimation would drop it.

export interface Envelope {
  /** Smallest and largest value in each bucket. */
  min: Float64Array;
  max: Float64Array;
  /** start[k] is the first index of bucket k; start[length] = n. Buckets tile [0, n) in order. */
  start: Int32Array;
}

/**
 * Splits values[0, n) into at most `columns` contiguous buckets of near-equal size (one per point when
 * n <= columns) and returns each bucket's min and max. O(n).
 */
export function envelope(values: ArrayLike<number>, columns: number): Envelope {
  const n = values.length;
  const buckets = Math.max(0, Math.min(n, Math.floor(columns)));
  const min = new Float64Array(buckets);
  const max = new Float64Array(buckets);
  const start = new Int32Array(buckets + 1);
  for (let k = 0; k < buckets; k++) {
    // Integer bounds so that buckets never overlap and sizes differ by at most one.
    const a = Math.floor((k * n) / buckets);
    const b = Math.floor(((k + 1) * n) / buckets);
    start[k] = a;
    let lo = values[a]!;
    let hi = lo;
    for (let i = a + 1; i < b; i++) {
      const v = values[i]!;
      if (v < lo) lo = v;
      else if (v > hi) hi = v;
    }
    min[k] = lo;
    max[k] = hi;
  }
  start[buckets] = n;
  return { min, max, start };
}

/**
 * The distinct pixel columns (rounded x) of sorted or unsorted event indices, so that thousands of
 * OOMs draw as at most one marker per column. `x` maps an index to a pixel position.
 */
export function markerColumns(indices: ArrayLike<number>, x: (index: number) => number): number[] {
  const seen = new Set<number>();
  for (let i = 0; i < indices.length; i++) seen.add(Math.round(x(indices[i]!)));
  return [...seen].sort((a, b) => a - b);
}
