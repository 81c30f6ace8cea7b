// The max_split slider's positions: round MiB values on a log scale (p, 1.25p, 1.5p, 1.75p for each
// power of two p) from the config's floor (large_segment_size_mb, 20 MiB by default: PyTorch refuses a
// max_split_size_mb below it) up to `topMiB`, then "unlimited".
import { MIN_MAX_SPLIT_SIZE_MB } from '../allocator/constants';

/** MiB per position; the last position, null, is unlimited. */
export function maxSplitSteps(topMiB: number, floorMiB: number = MIN_MAX_SPLIT_SIZE_MB): (number | null)[] {
  const steps: number[] = [floorMiB];
  for (let p = 1; p <= topMiB; p *= 2) {
    for (const f of [1, 1.25, 1.5, 1.75]) {
      const v = p * f;
      if (v > floorMiB && v <= topMiB && Number.isInteger(v)) steps.push(v);
    }
  }
  return [...steps, null];
}

/** The position nearest to `mib` (null: the top). */
export function stepIndex(steps: readonly (number | null)[], mib: number | null): number {
  if (mib === null) return steps.length - 1;
  let best = 0;
  steps.forEach((v, i) => {
    if (v !== null && Math.abs(Math.log(v / mib)) < Math.abs(Math.log(steps[best]! / mib))) best = i;
  });
  return best;
}
