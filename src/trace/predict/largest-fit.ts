// The largest size whose predicted run has no OOM under a cap and config. Reserved memory near a cap is
// not monotonic in the size (a larger batch can fragment less), so the bisection's answer is checked
// against the sizes just above it, and the search goes on past any of them that fits.

/** Sizes above the bisection's answer that are tried too (near a cap, a failing size can sit below a fitting one). */
const ABOVE = 3;

export interface LargestFit {
  /** The largest size found to fit; null when even size 1 does not. */
  largest: number | null;
  /** The smallest size found not to fit above it (null: none up to `limit`). */
  firstFailing: number | null;
  /** Every size tried, in order, and whether it fit. */
  tried: { size: number; fits: boolean }[];
}

/**
 * Searches whole sizes from `start` (a size known to the caller, e.g. the largest recorded): up by
 * doubling to the first that does not fit (at most `limit`), then by bisection, then the few above.
 */
export function largestFit(fits: (size: number) => boolean, start: number, limit: number): LargestFit {
  const tried: LargestFit['tried'] = [];
  const memo = new Map<number, boolean>();
  const test = (size: number): boolean => {
    let ok = memo.get(size);
    if (ok === undefined) {
      ok = fits(size);
      memo.set(size, ok);
      tried.push({ size, fits: ok });
    }
    return ok;
  };
  let lo = Math.max(1, Math.round(start));
  if (!test(lo)) {
    // Down: halve to the first that fits.
    let hi = lo;
    while (lo > 1 && !test(lo)) {
      hi = lo;
      lo = Math.max(1, Math.floor(lo / 2));
    }
    if (!test(lo)) return { largest: null, firstFailing: 1, tried };
    return finish(lo, hi);
  }
  let hi = lo;
  while (hi < limit && test(hi)) {
    lo = hi;
    hi = Math.min(limit, hi * 2);
  }
  if (test(hi)) return { largest: hi, firstFailing: null, tried };
  return finish(lo, hi);

  /** fits(lo), !fits(hi): bisect, then look just above the answer. */
  function finish(fitting: number, failing: number): LargestFit {
    for (;;) {
      while (failing - fitting > 1) {
        const mid = Math.floor((fitting + failing) / 2);
        if (test(mid)) fitting = mid;
        else failing = mid;
      }
      const above = [...Array(ABOVE).keys()].map((k) => failing + 1 + k).filter((s) => s <= limit).find((s) => test(s));
      if (above === undefined) return { largest: fitting, firstFailing: failing, tried };
      // A size above the first failure fits: go on from there.
      fitting = above;
      failing = above;
      while (failing < limit && test(failing)) {
        fitting = failing;
        failing = Math.min(limit, failing * 2);
      }
      if (test(failing)) return { largest: failing, firstFailing: null, tried };
    }
  }
}
