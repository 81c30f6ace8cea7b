// "What if this recording had run under that config?": the recorded config, the chosen one,
// the address model that fits, and the replay, in one call shared by the CLI, the worker and tests.
import { fractionCapacity, H200_TOTAL_MEMORY, type Capacity } from '../../allocator/capacity';
import { deviceTotalFromMappings } from '../stream/recorded-device-total';
import { maxSplitWithExpandable } from '../../allocator/config-myths';
import { sameDecisions, type AllocatorConfig } from '../../allocator/config';
import { parseAllocConf } from '../../allocator/config-parser';
import { recordedConfig } from '../snapshot/recorded-config';
import { capNote, capOf, oomCap, type RecordedCap } from '../stream/recorded-cap';
import { replay, type AddressModel, type InsertedCalls, type ReplayOptions, type ReplayResult } from './replay';
import type { RequestStream } from '../stream/request-stream';
import { requestStreamFromSnapshot, requestStreamFromTrace } from '../stream/request-stream-from-trace';
import type { Snapshot } from '../snapshot/snapshot';
import type { TraceColumns } from '../snapshot/trace-columns';
import { grouped } from '../../lib/grouped';
import { counted } from '../../lib/counted';
import { coverageOf } from './coverage';

export interface SnapshotReplayOptions extends InsertedCalls {
  /** A whole PYTORCH_CUDA_ALLOC_CONF string replacing the recorded one; keys it omits take defaults. */
  conf?: string;
  /** The memory cap; absent: the one a recorded OOM shows, if any; null: none at all. */
  capacity?: Capacity | null;
  /** Default: 'recorded' when the config makes the recorded decisions, else 'simulated'. */
  addresses?: AddressModel;
  device?: number;
  /** A stream already built from this snapshot (saves rebuilding it for every setting of a sweep). */
  stream?: RequestStream;
  /** A stream built here has its columns in shared memory (see RequestStreamBuilder). */
  sharedMemory?: boolean;
  /** The device's trace as columns, when the snapshot's device_traces were not kept (decodeSnapshotForReplay). */
  trace?: TraceColumns;
  /** See ReplayOptions.statsOnly. */
  statsOnly?: boolean;
  /** See ReplayOptions.keepEvents. */
  keepEvents?: boolean;
  /** See ReplayOptions.until. */
  until?: number;
}

export interface SnapshotReplay {
  result: ReplayResult;
  stream: RequestStream;
  config: AllocatorConfig;
  recorded: AllocatorConfig;
  addresses: AddressModel;
  /** The cap it ran under, and the recorded OOM's it was inferred from, if it was. */
  capacity: Capacity | undefined;
  inferredCap: RecordedCap | null;
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
  /** The cap replayed under: the one asked for, or the one a recorded OOM shows (then `inferredCap`). */
  capacity: Capacity | undefined;
  inferredCap: RecordedCap | null;
  /** For replay() or a ReplayCursor (add until / statsOnly as wanted). */
  replayOptions: ReplayOptions;
}

/** What a snapshot without allocation history shows, and how to record one that replays. */
export const NO_HISTORY =
  'This snapshot has no allocation history (torch.cuda.memory_snapshot(), or _snapshot() without ' +
  '_record_memory_history): it shows the memory at one moment, and there is nothing to replay or sweep. To record ' +
  'history, run torch.cuda.memory._record_memory_history(max_entries=100000) before the code, and ' +
  'torch.cuda.memory._dump_snapshot("snapshot.pickle") after it.';

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
  const streamOptions = { device: options.device ?? 0, config: recorded.config, sharedMemory: options.sharedMemory ?? false };
  const stream =
    options.stream ??
    (options.trace
      ? requestStreamFromTrace(options.trace, snapshot.segments, streamOptions)
      : requestStreamFromSnapshot(snapshot, streamOptions));
  notes.push(...stream.notes);
  if (snapshot.notes) notes.unshift(...snapshot.notes);
  if (stream.length === 0) notes.unshift(NO_HISTORY);
  // The cap: the one asked for, else the config's per_process_memory_fraction, else the one a
  // recording that ended in an OOM shows.
  // The device's memory where the recording shows it (its expandable ranges), else an H200's.
  const deviceTotal = deviceTotalFromMappings(stream.recordedMappings);
  const fromConfig = fractionCapacity(config.perProcessMemoryFraction, deviceTotal ?? H200_TOTAL_MEMORY);
  const inferredCap = options.capacity === undefined && !fromConfig ? oomCap(stream) : null;
  const capacity = options.capacity ?? fromConfig ?? (inferredCap ? capOf(inferredCap) : undefined);
  if (inferredCap) notes.push(capNote(inferredCap, true));
  else if (options.capacity === undefined && !fromConfig && stream.recordedCap) notes.push(capNote(stream.recordedCap, false));
  const addresses = options.addresses ?? (sameDecisions(config, recorded.config) ? 'recorded' : 'simulated');
  if (config.garbageCollectionThreshold > 0 && capacity?.kind !== 'fraction') {
    notes.push(
      'garbage_collection_threshold has no effect without a memory cap (PyTorch runs gc only under ' +
        'set_per_process_memory_fraction); give a capacity to see it work.',
    );
  }
  const replayOptions: ReplayOptions = {
    config,
    addresses,
    ...(capacity ? { capacity } : {}),
    ...(deviceTotal !== null ? { deviceTotal } : {}),
    ...(options.device !== undefined ? { device: options.device } : {}),
    ...(options.emptyCacheAfter ? { emptyCacheAfter: options.emptyCacheAfter } : {}),
    ...(options.resetPeakAfter ? { resetPeakAfter: options.resetPeakAfter } : {}),
  };
  return { stream, config, recorded: recorded.config, addresses, notes, capacity, inferredCap, replayOptions };
}

export function replaySnapshot(snapshot: Snapshot, options: SnapshotReplayOptions = {}): SnapshotReplay {
  const plan = planSnapshotReplay(snapshot, options);
  const { stream, notes } = plan;
  const result = replay(stream, {
    ...plan.replayOptions,
    ...(options.statsOnly ? { statsOnly: true } : {}),
    ...(options.keepEvents !== undefined ? { keepEvents: options.keepEvents } : {}),
    ...(options.until !== undefined ? { until: options.until } : {}),
  });
  notes.push(...replayNotes(result), ...(options.until === undefined ? oomVerdict(stream, result) : []));
  return { result, stream, config: plan.config, recorded: plan.recorded, addresses: plan.addresses, capacity: plan.capacity, inferredCap: plan.inferredCap, notes };
}

/**
 * A recording that ends at its OOM (an out-of-memory observer's dump), replayed: where the OOM comes
 * now, or that none came through the last recorded request, after which the program is unknown.
 */
export function oomVerdict(stream: RequestStream, result: ReplayResult): string[] {
  const recorded = stream.recordedOoms;
  if (recorded.length === 0) return [];
  const coverage = coverageOf(stream);
  const first = result.ooms[0];
  if (!first) {
    return coverage.endsAtOom !== null
      ? [`No OOM through request ${grouped(stream.length - 1)}, where the recording ends (its OOM was at request ${grouped(coverage.endsAtOom)}); what the program did after it was never recorded.`]
      : [`No OOM: the recording's OOM${recorded.length > 1 ? 's' : ''} (first at request ${grouped(recorded[0]!)}) did not come.`];
  }
  const at = recorded[recorded.length - 1]!;
  if (first.request === at && result.ooms.length === recorded.length) return [`The OOM comes at request ${grouped(at)}, as recorded.`];
  return [
    `The first OOM comes at request ${grouped(first.request)} (the recording's ${recorded.length > 1 ? 'first ' : ''}was at request ${grouped(recorded[0]!)}).`,
  ];
}

/** What a replay tells the user about itself: parts of the state before the trace that it left out,
 * and segments a recorded-address replay had to place itself. */
/** What the notes call the settings the user gives, where they are read: the CLI's flags or the page's controls. */
export interface NoteWords {
  capacity: string;
}
export const CLI_WORDS: NoteWords = { capacity: '--capacity' };
export const PAGE_WORDS: NoteWords = { capacity: 'the Memory cap control' };

export function replayNotes(result: ReplayResult, words: NoteWords = CLI_WORDS): string[] {
  const notes = result.problems.map((p) => `Inconsistent trace: ${p}`);
  const together = maxSplitWithExpandable(result.allocator.config);
  if (together) notes.push(together);
  if (result.caught.length > 0) {
    notes.push(
      `${counted(result.caught.length, 'cuDNN workspace allocation')} did not fit (the first at request ${grouped(result.caught[0]!.request)}). ` +
        'PyTorch catches each such OOM and runs another engine config, so the program goes on: this replay leaves those workspaces out ' +
        '(the config cuDNN turns to may take a smaller one).',
    );
  }
  if (result.divergences.length > 0) {
    const first = result.divergences[0]!;
    notes.push(
      `The recording never made ${result.divergences.length} of the segments this replay needed ` +
        `(first at request ${first.request}, ${first.size} bytes): those were placed by the driver model. ` +
        `The usual reason is a memory cap in the recording that was not given (${words.capacity}).`,
    );
  }
  return notes;
}
