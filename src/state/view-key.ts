// The view key: the source on screen and the settings it replays under (config, cap, device, inserted
// calls). The main replay and every derived result (sweep, guide, comparison, explorer, stack view,
// search, digests) are computed for one, and a panel shows its figures only beside the key they
// were computed for; while the current key's are not in, it says "updating…".
import type { ReplaySettings, SourceKey, ViewKey } from '../worker/replay-settings';

/** The key of `source` under `settings` (fields at their defaults left out, so that equal keys are equal JSON). */
export function keyOf(source: number, settings: ReplaySettings): ViewKey {
  return {
    source,
    conf: settings.conf,
    capacityBytes: settings.capacityBytes,
    ...(settings.device ? { device: settings.device } : {}),
    ...(settings.emptyCacheAfter?.length ? { emptyCacheAfter: settings.emptyCacheAfter } : {}),
    ...(settings.resetPeakAfter?.length ? { resetPeakAfter: settings.resetPeakAfter } : {}),
    ...(settings.size !== undefined ? { size: settings.size } : {}),
  };
}

/** A key as one string (data-key attributes, comparisons). */
export function keyId(key: ViewKey | SourceKey | null | undefined): string {
  if (!key) return '';
  const k = key as ViewKey;
  return JSON.stringify([k.source, k.conf ?? null, k.capacityBytes ?? null, k.device ?? 0, k.emptyCacheAfter ?? [], k.resetPeakAfter ?? [], k.size ?? null]);
}

/** A source key's parts after the source, for a query key (which names the source second: derived.ts). */
export function sourceParts(key: SourceKey): [number, number | null] {
  return [key.device ?? 0, key.size ?? null];
}

/** The source and device part of a key (what a search, the event list and the time axis depend on). */
export function sourceKeyOf(key: ViewKey): SourceKey {
  return { source: key.source, ...(key.device ? { device: key.device } : {}), ...(key.size !== undefined ? { size: key.size } : {}) };
}

/** The key an id was made from. */
export function keyFromId(id: string): ViewKey {
  const [source, conf, capacityBytes, device, emptyCacheAfter, resetPeakAfter, size] = JSON.parse(id) as [number, string | null, number | null, number, number[], number[], number | null];
  return keyOf(source, { conf, capacityBytes, device, emptyCacheAfter, resetPeakAfter, ...(size !== null ? { size } : {}) });
}
