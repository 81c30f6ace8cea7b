// "What if this recording had run under that config?": the recorded config, the chosen one,
// the address model that fits, and the replay, in one call shared by the CLI, the worker and tests.
import type { Capacity } from '../../allocator/capacity';
import { sameDecisions, type AllocatorConfig } from '../../allocator/config';
import { parseAllocConf } from '../../allocator/config-parser';
import { recordedConfig } from '../snapshot/recorded-config';
import { replay, type AddressModel, type InsertedCalls, type ReplayOptions, type ReplayResult } from './replay';
import type { RequestStream } from '../stream/request-stream';
import { requestStreamFromSnapshot, requestStreamFromTrace } from '../stream/request-stream-from-trace';
import type { Snapshot } from '../snapshot/snapshot';
import type { TraceColumns } from '../snapshot/trace-columns';

export interface SnapshotReplayOptions extends InsertedCalls {
  /** A whole PYTORCH_CUDA_ALLOC_CONF string replacing the recorded one; keys it omits take defaults. */
  conf?: string;
  capacity?: Capacity;
  /** Default: 'recorded' when the config makes the recorded decisions, else 'simulated'. */
  addresses?: AddressModel;
  device?: number;
  /** A stream already built from this snapshot (saves rebuilding it for every setting of a sweep). */
  stream?: RequestStream;
  /** The device's trace as columns, when the snapshot's device_traces were not kept (decodeSnapshotForReplay). */
  trace?: TraceColumns;
  /** See ReplayOptions.statsOnly. */
  statsOnly?: boolean;
  /** See ReplayOptions.until. */
  until?: number;
}

export interface SnapshotReplay {
  result: ReplayResult;
  stream: RequestStream;
  config: AllocatorConfig;
  recorded: AllocatorConfig;
  addresses: AddressModel;
  /** Things the user should know about this replay (assumptions, parser warnings, divergences). */
  notes: string[];
}

/** Everything a replay of `snapshot` under `options` needs, short of running it. */
export interface SnapshotReplayPlan {
  stream: RequestStream;
  config: AllocatorConfig;
  recorded: AllocatorConfig;
  addresses: AddressModel;
  notes: string[];
  /** For replay() or a ReplayCursor (add until / statsOnly as wanted). */
  replayOptions: ReplayOptions;
}

export function planSnapshotReplay(snapshot: Snapshot, options: SnapshotReplayOptions = {}): SnapshotReplayPlan {
  const recorded = recordedConfig(snapshot.allocator_settings);
  const notes: string[] = [];
  if (!recorded.known) {
    notes.push(
      'The file does not say which allocator settings it was recorded with (older PyTorch versions do not ' +
        'write allocator_settings): the recording is taken to have used the defaults.',
    );
  }
  let config = recorded.config;
  if (options.conf !== undefined) {
    const parsed = parseAllocConf(options.conf);
    config = parsed.config;
    notes.push(...parsed.warnings);
  }
  const streamOptions = { device: options.device ?? 0, config: recorded.config };
  const stream =
    options.stream ??
    (options.trace
      ? requestStreamFromTrace(options.trace, snapshot.segments, streamOptions)
      : requestStreamFromSnapshot(snapshot, streamOptions));
  notes.push(...stream.notes);
  const addresses = options.addresses ?? (sameDecisions(config, recorded.config) ? 'recorded' : 'simulated');
  if (config.garbageCollectionThreshold > 0 && options.capacity?.kind !== 'fraction') {
    notes.push(
      'garbage_collection_threshold has no effect without a memory cap (PyTorch runs gc only under ' +
        'set_per_process_memory_fraction); give a capacity to see it work.',
    );
  }
  const replayOptions: ReplayOptions = {
    config,
    addresses,
    ...(options.capacity ? { capacity: options.capacity } : {}),
    ...(options.device !== undefined ? { device: options.device } : {}),
    ...(options.emptyCacheAfter ? { emptyCacheAfter: options.emptyCacheAfter } : {}),
    ...(options.resetPeakAfter ? { resetPeakAfter: options.resetPeakAfter } : {}),
  };
  return { stream, config, recorded: recorded.config, addresses, notes, replayOptions };
}

export function replaySnapshot(snapshot: Snapshot, options: SnapshotReplayOptions = {}): SnapshotReplay {
  const plan = planSnapshotReplay(snapshot, options);
  const { stream, notes } = plan;
  const result = replay(stream, {
    ...plan.replayOptions,
    ...(options.statsOnly ? { statsOnly: true } : {}),
    ...(options.until !== undefined ? { until: options.until } : {}),
  });
  const note = divergenceNote(result);
  if (note) notes.push(note);
  return { result, stream, config: plan.config, recorded: plan.recorded, addresses: plan.addresses, notes };
}

/** What a recorded-address replay that had to place segments itself tells the user, if it did. */
export function divergenceNote(result: ReplayResult): string | null {
  if (result.divergences.length === 0) return null;
  const first = result.divergences[0]!;
  return (
    `The recording never made ${result.divergences.length} of the segments this replay needed ` +
    `(first at request ${first.request}, ${first.size} bytes): those were placed by the driver model. ` +
    'The usual reason is a memory cap in the recording that was not given (--capacity).'
  );
}
