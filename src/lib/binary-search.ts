/** Binary search over a sorted range: the first index in [lo, hi) where `pred` is false, `pred` being true on a prefix. */
export function partitionPoint(lo: number, hi: number, pred: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index in [lo, hi) whose value is > v (values ascending). */
export function upperBound(values: ArrayLike<number>, v: number, lo = 0, hi = values.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The value after `v` (direction 1) or before it (-1) in ascending distinct `values`, wrapping around; null if empty. */
export function stepInSorted(values: ArrayLike<number>, v: number, direction: 1 | -1): number | null {
  const n = values.length;
  if (n === 0) return null;
  const above = upperBound(values, v);
  if (direction === 1) return values[above % n]!;
  const below = above - 1 >= 0 && values[above - 1] === v ? above - 2 : above - 1;
  return values[below >= 0 ? below : n - 1]!;
}
