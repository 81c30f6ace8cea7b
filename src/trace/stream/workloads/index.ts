// The built-in workloads, in the order a menu shows them.

import { bigSmallAlternation } from './big-small-alternation';
import { kvCacheGrowth } from './kv-cache-growth';
import { logUniformSizes } from './log-uniform-sizes';
import { mixtureOfExperts } from './mixture-of-experts';
import { transformerTraining } from './transformer-training';
import type { Workload } from './workload';

export { Prng } from './prng';
export { resolveParams, type Workload, type WorkloadParam, type WorkloadParamUnit } from './workload';
export { WorkloadParamError } from './workload-param-error';
export { bigSmallAlternation, kvCacheGrowth, logUniformSizes, mixtureOfExperts, transformerTraining };

export const WORKLOADS: readonly Workload[] = Object.freeze([
  transformerTraining,
  kvCacheGrowth,
  mixtureOfExperts,
  bigSmallAlternation,
  logUniformSizes,
]);

export function workloadById(id: string): Workload | undefined {
  return WORKLOADS.find((w) => w.id === id);
}
