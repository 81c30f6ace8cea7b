// A generated workload under many seeds: how likely an OOM is under one config, rather than whether
// one particular run hits one.
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { configRow, type SweepRow } from './sweep';
import { workloadById } from '../stream/workloads';

/** The workload `id` with `params` and seed `seed`, replayed under `config`. */
export function seedRow(id: string, params: Readonly<Record<string, number>>, seed: number, config: AllocatorConfig, capacity?: Capacity): SweepRow {
  const workload = workloadById(id);
  if (!workload) throw new Error(`There is no built-in workload "${id}".`);
  return configRow(workload.generate({ ...params, seed }), config, null, capacity);
}

/** The share of rows with at least one OOM. */
export function oomProbability(rows: readonly SweepRow[]): number {
  return rows.length === 0 ? 0 : rows.filter((r) => r.num_ooms > 0).length / rows.length;
}
