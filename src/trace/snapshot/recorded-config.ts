// The allocator config a snapshot was recorded under, from its allocator_settings.
import { DEFAULT_CONFIG, divisionLabel, type AllocatorConfig } from '../../allocator/config';
import { parseAllocConf } from '../../allocator/config-parser';
import { ROUNDUP_POWER2_INTERVALS } from '../../allocator/constants';
import type { AllocatorSettings } from './snapshot';

export interface RecordedConfig {
  config: AllocatorConfig;
  /** The PYTORCH_CUDA_ALLOC_CONF string as recorded ('' when unset or unknown). */
  conf: string;
  /** False when the file has no allocator_settings (older PyTorch): defaults are assumed. */
  known: boolean;
}

/**
 * The resolved fields (max_split_size, roundup_power2_divisions ...) are what the allocator used,
 * so they win over the string (which a program may have changed at run time).
 */
export function recordedConfig(settings: AllocatorSettings | undefined): RecordedConfig {
  if (!settings) return { config: DEFAULT_CONFIG, conf: '', known: false };
  const conf = typeof settings.PYTORCH_CUDA_ALLOC_CONF === 'string' ? settings.PYTORCH_CUDA_ALLOC_CONF : '';
  let base = DEFAULT_CONFIG;
  try {
    base = parseAllocConf(conf).config;
  } catch {
    // A string this PyTorch accepted but our parser does not: the resolved fields below still apply.
  }
  const maxSplit = settings.max_split_size;
  const divisions = settings.roundup_power2_divisions;
  const config: AllocatorConfig = {
    ...base,
    maxSplitSize: typeof maxSplit === 'number' && maxSplit >= 0 ? maxSplit : Infinity,
    garbageCollectionThreshold:
      typeof settings.garbage_collection_threshold === 'number' ? settings.garbage_collection_threshold : 0,
    expandableSegments: settings.expandable_segments === true,
    roundupPower2Divisions:
      divisions && typeof divisions === 'object'
        ? Array.from({ length: ROUNDUP_POWER2_INTERVALS }, (_, i) => Number(divisions[divisionLabel(i)] ?? 0))
        : base.roundupPower2Divisions,
  };
  return { config, conf, known: true };
}
