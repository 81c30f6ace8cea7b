// What every built-in workload generator declares: named numeric parameters with ranges, and a
// deterministic generate(values) -> RequestStream. resolveParams is the single gate for values
// from the page, a share link or the CLI.

import type { RequestStream } from '../request-stream';
import { WorkloadParamError } from './workload-param-error';

export type WorkloadParamUnit = 'bytes' | 'tokens' | 'features' | 'count' | 'steps';

export interface WorkloadParam {
  key: string;
  label: string;
  default: number;
  min: number;
  max: number;
  integer: boolean;
  unit?: WorkloadParamUnit;
  /** A slider over this range reads better on a log scale (byte sizes spanning decades). */
  log?: boolean;
  help: string;
}

export interface Workload {
  id: string;
  name: string;
  description: string;
  params: readonly WorkloadParam[];
  /** Constraints between parameters (min <= max ...): throws a WorkloadParamError. */
  check?(values: Readonly<Record<string, number>>): void;
  /** Calls resolveParams itself: missing values take their defaults, bad ones throw. */
  generate(values: Readonly<Record<string, number>>): RequestStream;
}

/** The seed parameter every workload shares. */
export const SEED_PARAM: WorkloadParam = {
  key: 'seed',
  label: 'Seed',
  default: 1,
  min: 0,
  max: 0xffffffff,
  integer: true,
  help: 'PRNG seed; the same parameters and seed give the same request stream',
};

function describeRange(p: WorkloadParam): string {
  return `${p.integer ? 'an integer' : 'a number'} from ${p.min} to ${p.max}`;
}

/** Defaults filled in; throws WorkloadParamError for unknown keys, non-finite, out-of-range or non-integer values. */
export function resolveParams(w: Workload, given: Readonly<Record<string, number>>): Record<string, number> {
  const byKey = new Map(w.params.map((p) => [p.key, p]));
  for (const key of Object.keys(given)) {
    if (!byKey.has(key)) {
      throw new WorkloadParamError(
        `Workload "${w.id}" has no parameter "${key}"; its parameters are ${w.params.map((p) => p.key).join(', ')}.`,
        key,
      );
    }
  }
  const values: Record<string, number> = {};
  for (const p of w.params) {
    const v = Object.prototype.hasOwnProperty.call(given, p.key) ? given[p.key] : p.default;
    const bad = (why: string): WorkloadParamError =>
      new WorkloadParamError(`Parameter "${p.key}" (${p.label}) ${why}: it must be ${describeRange(p)}, got ${String(v)}.`, p.key);
    if (typeof v !== 'number' || !Number.isFinite(v)) throw bad('is not a finite number');
    if (p.integer && !Number.isInteger(v)) throw bad('is not an integer');
    if (v < p.min || v > p.max) throw bad('is out of range');
    values[p.key] = v;
  }
  w.check?.(values);
  return values;
}

/** For check(): `lo` must not exceed `hi`. */
export function requireOrdered(values: Readonly<Record<string, number>>, lo: string, hi: string): void {
  if (values[lo]! > values[hi]!) {
    throw new WorkloadParamError(
      `Parameter "${lo}" (${values[lo]}) must not exceed "${hi}" (${values[hi]}); lower "${lo}" or raise "${hi}".`,
      lo,
    );
  }
}
