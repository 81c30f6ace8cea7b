// What a replay of the source runs under, as a zod schema: the one source of the ReplaySettings type
// (the worker's protocol, the session) and of those fields of the share link (state/link-schema.ts).
import { z } from 'zod';

const requestIndices = z.array(z.number().int().nonnegative()).max(10_000);

export const replaySettingsSchema = z.object({
  /** A whole PYTORCH_CUDA_ALLOC_CONF string; null: the source's own (recorded, or defaults). */
  conf: z.string().max(2000).nullable(),
  /** A set_per_process_memory_fraction cap in bytes; null: none. */
  capacityBytes: z.number().int().positive().max(2 ** 53).nullable(),
  /** The device whose trace replays, in a snapshot of several GPUs (absent: 0). */
  device: z.number().int().nonnegative().max(1023).optional(),
  /** Inserted calls, by request index: torch.cuda.empty_cache() after these requests ... */
  emptyCacheAfter: requestIndices.optional(),
  /** ... and torch.cuda.reset_peak_memory_stats() (after empty_cache where both are given). */
  resetPeakAfter: requestIndices.optional(),
  /** A predicted run's size (a batch, a sequence length: trace/predict); only a prediction has one. */
  size: z.number().positive().max(1e12).optional(),
});

/** Null fields take the source's own (recorded config, no cap). */
export type ReplaySettings = z.infer<typeof replaySettingsSchema>;

/** The inserted calls of `settings`, absent kinds left out. */
export function insertedCallsOf(settings: ReplaySettings): { emptyCacheAfter?: number[]; resetPeakAfter?: number[] } {
  return {
    ...(settings.emptyCacheAfter?.length ? { emptyCacheAfter: settings.emptyCacheAfter } : {}),
    ...(settings.resetPeakAfter?.length ? { resetPeakAfter: settings.resetPeakAfter } : {}),
  };
}

/**
 * What a replay and everything derived from it are computed for: the source (its id on the page) and
 * the settings. The page shows a figure only beside the key it was computed for; the worker refuses a
 * call for a source it no longer holds (SUPERSEDED).
 */
export interface ViewKey extends ReplaySettings {
  source: number;
}

/** The name of the error the worker answers a call for a source it no longer holds with. */
export const SUPERSEDED = 'SupersededError';

/** What a call about the source alone names: the source, the device whose trace it reads, and a
 * prediction's size (its requests change with it). */
export type SourceKey = Pick<ViewKey, 'source' | 'device' | 'size'>;
