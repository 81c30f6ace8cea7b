// A predicted run's size control and its chart: the sizes the slider offers, and the predicted run's
// peaks at each of them under the rest of the view key (a derived result, computed in the replay worker).
import { queryOptions } from '@tanstack/react-query';
import type { CurvePoint } from '../worker/replay-protocol';
import type { ViewKey } from '../worker/replay-settings';
import { callWorker } from './replay-client';
import { keyId } from './view-key';

/** The size slider's positions: every whole size up to 16, then steps of about 12.5%, up to 4x the largest recorded. */
export function sizeSteps(recorded: readonly number[]): number[] {
  const top = Math.max(16, 4 * Math.max(...recorded));
  const steps = new Set<number>();
  for (let s = 1; s <= Math.min(16, top); s++) steps.add(s);
  for (let s = 16; s <= top; s = Math.max(s + 1, Math.round(s * 1.125))) steps.add(s);
  steps.add(Math.round(top));
  for (const r of recorded) if (Number.isInteger(r)) steps.add(r);
  return [...steps].sort((a, b) => a - b);
}

/** At most this many sizes on the chart (each a replay in the worker). */
const CHART_POINTS = 24;

/** The chart's sizes: the recorded ones, the one on screen, and the slider's positions thinned out. */
export function chartSizes(steps: readonly number[], recorded: readonly number[], current: number): number[] {
  const every = Math.max(1, Math.ceil(steps.length / CHART_POINTS));
  return [...new Set([...steps.filter((_, i) => i % every === 0), ...recorded, current, steps.at(-1)!])].sort((a, b) => a - b);
}


/** The predicted run's peaks and first OOM at each of `sizes`, under `key` but its size. */
export function predictionCurveQuery(key: ViewKey, sizes: readonly number[]) {
  const { size: _size, ...rest } = key;
  return queryOptions({
    queryKey: ['prediction-curve', key.source, keyId(rest), sizes],
    queryFn: (): Promise<CurvePoint[]> => callWorker((w) => w.predictionCurve(key, [...sizes])),
  });
}

/** The largest size that fits the key's cap, under its config and with expandable_segments:True (null: no cap). */
export function predictionFitQuery(key: ViewKey) {
  const { size: _size, ...rest } = key;
  return queryOptions({
    queryKey: ['prediction-fit', key.source, keyId(rest)],
    queryFn: () => callWorker((w) => w.predictionFit(key)),
  });
}

/** Which usual cards the key's run fits. */
export function memoryNeededQuery(key: ViewKey) {
  return queryOptions({
    queryKey: ['memory-needed', key.source, keyId(key)],
    queryFn: () => callWorker((w) => w.memoryNeeded(key)),
  });
}
