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
