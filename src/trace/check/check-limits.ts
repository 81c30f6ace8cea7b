// The limits a memory regression gate holds a new recording to, against its baseline: how much peak
// reserved and peak allocated memory, and a category of memory (trace/categories), may grow ("+5%",
// or a size, "+512MiB"), and whether a new OOM is allowed. A limit typed wrong is refused with what
// was expected.
import { parseByteSize } from '../../allocator/byte-size';
import { ConfigError } from '../../allocator/config-error';
import { CATEGORY_KEYS, CATEGORY_NAMES, type CategoryKey } from '../categories/categories';

/** Growth allowed: a share of the baseline's figure, or bytes. */
export type Growth = { kind: 'percent'; value: number } | { kind: 'bytes'; value: number };

export type Limit =
  | { figure: 'peak_reserved' | 'peak_allocated'; growth: Growth }
  | { figure: 'category'; category: CategoryKey; growth: Growth }
  | { figure: 'no_new_oom' };

/** "+5%", "5%", "+512MiB", "1GB" (growth at most that). */
export function parseGrowth(text: string, option: string): Growth {
  const t = text.trim().replace(/^\+/, '');
  const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(t);
  if (percent) return { kind: 'percent', value: Number(percent[1]) };
  // "5" would be 5 bytes, which nobody means: a share or a size says its unit.
  if (/^\d+(\.\d+)?$/.test(t)) throw new ConfigError(`${option} takes the growth allowed with its unit, a share or a size (e.g. +5% or +512MiB), not '${text}'`);
  try {
    return { kind: 'bytes', value: parseByteSize(t) };
  } catch {
    throw new ConfigError(`${option} takes the growth allowed, as a share or a size (e.g. +5% or +512MiB), not '${text}'`);
  }
}

/** "activations:+10%", "optimizer_state:+1GiB": a category by its key or its name, and its growth. */
export function parseCategoryLimit(text: string): Limit {
  const at = text.lastIndexOf(':');
  const name = (at > 0 ? text.slice(0, at) : '').trim().toLowerCase().replace(/[ -]/g, '_');
  const k = CATEGORY_KEYS.findIndex((key, c) => key === name || CATEGORY_NAMES[c]!.replace(/ /g, '_') === name || `${key}s` === name);
  if (at <= 0 || k < 0) {
    throw new ConfigError(`--category takes CATEGORY:GROWTH with CATEGORY one of ${CATEGORY_KEYS.join(', ')} (e.g. activation:+10%), not '${text}'`);
  }
  return { figure: 'category', category: CATEGORY_KEYS[k]!, growth: parseGrowth(text.slice(at + 1), '--category') };
}

/** The most `base` may grow to under `growth`. */
export function allowed(base: number, growth: Growth): number {
  return growth.kind === 'percent' ? base * (1 + growth.value / 100) : base + growth.value;
}

export function growthText(growth: Growth, format: (bytes: number) => string): string {
  return growth.kind === 'percent' ? `+${growth.value}%` : `+${format(growth.value)}`;
}
