// Parses snapshots, builds workloads and replays them off the main thread. The page calls the methods
// of `api` through comlink (state/replay-client.ts), each call answered once.
/// <reference lib="webworker" />
import { counted } from '../lib/counted';
import { fractionCapacity, H200_TOTAL_MEMORY } from '../allocator/capacity';
import { configToString, DEFAULT_CONFIG } from '../allocator/config';
import { exportSnapshot } from '../trace/replay/snapshot-export';
import { recordingDigest, type RecordingDigest } from '../trace/replay/recording-digest';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { fragmentation } from '../trace/measures/fragmentation';
import { layoutBuffers, memoryLayout } from '../trace/measures/memory-layout';
import type { CachingAllocator } from '../allocator/caching-allocator';
import { replay, ReplayCursor, type ReplayOom, type ReplayOptions, type ReplayResult } from '../trace/replay/replay';
import { oomVerdict, PAGE_WORDS, planSnapshotReplay, replayNotes } from '../trace/replay/replay-snapshot';
import { RequestKind, type RequestStream } from '../trace/stream/request-stream';
import type { Snapshot } from '../trace/snapshot/snapshot';
import { allocationStacks, stackMatcher, type AllocationStacks, type StackSelection } from '../trace/measures/allocation-stacks';
import { bytesOverTime } from '../trace/measures/bytes-over-time';
import { eventRows, requestOfEntries, type EventRow } from '../trace/measures/event-rows';
import { hasTimes, requestTimes, timelineAnnotations, type TimelineAnnotation } from '../trace/measures/timeline-annotations';
import { parseSearch, searchRequests, type SearchMatches, type SearchQuery } from '../trace/measures/event-search';
import { frameLabel } from '../trace/measures/frame-filter';
import { memoryByStack, type StackTree } from '../trace/measures/memory-by-stack';
import type { TraceColumns } from '../trace/snapshot/trace-columns';
import { decodeSnapshotBlob } from '../trace/snapshot/snapshot-blob';
import { decodeSnapshotForReplay, encodeSnapshotFile } from '../trace/snapshot/snapshot-file';
import { workloadById } from '../trace/stream/workloads';
import { expose, transfer } from 'comlink';
import type { CompareRun, CursorView, CurvePoint, PredictionFacts, ReplaySummary, ReplayTimeline } from './replay-protocol';
import { canShare, sharedStream } from './shared-stream';
import { insertedCallsOf, SUPERSEDED, type ReplaySettings, type SourceKey, type ViewKey } from './replay-settings';
import { coverageOf } from '../trace/replay/coverage';
import { SizePredictor, type Prediction, type SizedRecording } from '../trace/predict/predict-stream';
import { isSplit, layoutNote, verdictUnderLayouts } from '../trace/predict/address-layouts';
import { sizeFits, type SizeFit } from '../trace/predict/size-fit';
import { bandOfPredictor } from '../trace/predict/prediction-band';
import { categorize, categoryTotals, stackedCategorySeries, type Categories, type StackedCategories } from '../trace/categories/categories';
import { stepStarts } from '../trace/categories/steps';
import { explainRun, type Explanation } from '../trace/explain/explain';
import { smallerSizeFix } from '../trace/explain/fixes';
import { compareRuns } from '../trace/sweep/rank-runs';
import { memoryNeeded, type MemoryNeeded } from '../trace/sweep/memory-needed';

interface Source {
  /** The page's id for it: every call names the source it is for (ViewKey.source). */
  id: number;
  name: string;
  /** A snapshot's segments and settings; its traces are in `traces` (device_traces left empty). */
  snapshot: Snapshot | null;
  /** Each device's trace as columns, with times and stack frames. */
  traces: TraceColumns[];
  /** The request stream of `device`'s trace (built on the first replay of that device). */
  stream: RequestStream | null;
  device: number;
  /** Request index of each logical id's alloc (-1: before the trace began). */
  allocIndex: Int32Array | null;
  /** Where each allocation of `stream` was made (built when a stack is first asked for). */
  stacks: AllocationStacks | null;
  /** For each entry of the device's trace, the request it belongs to (built for the event list or a search). */
  requestOf: Int32Array | null;
  /** Peak reserved memory under the source's own config, by device and predicted size (the max_split slider's top). */
  ownPeak: Map<string, number>;
  /** A predicted run (trace/predict): its recordings, and the size `stream` was predicted at. */
  prediction: PredictionSource | null;
}

interface PredictionSource {
  predictor: SizePredictor;
  /** Each recording's snapshot and traces, by name (the skeleton's give the stacks). */
  recordings: Map<string, { snapshot: Snapshot; traces: TraceColumns[] }>;
  /** The size `stream` holds, and how it was predicted. */
  size: number;
  last: Prediction | null;
  /** The prediction's error band at a size (its measurements made once per config). */
  band: ReturnType<typeof bandOfPredictor>;
}

let source: Source | null = null;
/** The settings the source's stream was last planned under (its device decides which trace). */
let settings: ReplaySettings = { conf: null, capacityBytes: null };
/** The last full replay: its settings, and the allocator at its end, which a view or a stack tree at
 * the last request reads rather than replaying the trace again. */
let last: { id: string; source: Source; end: CachingAllocator } | null = null;

/** A source-free identity of settings (what cursors, OOMs and the last replay are kept by). */
const settingsId = (s: ReplaySettings): string =>
  JSON.stringify([s.conf, s.capacityBytes, s.device ?? 0, s.emptyCacheAfter ?? [], s.resetPeakAfter ?? [], s.size ?? null]);

/** The settings of a key, without its source. */
function settingsOf(key: ViewKey): ReplaySettings {
  const { source: _source, ...rest } = key;
  return rest;
}

/** Thrown for a call about a source this worker no longer holds (a newer one was opened). */
function superseded(): Error {
  const e = new Error('A newer source replaced the one this was asked for.');
  e.name = SUPERSEDED;
  return e;
}

/** The open source, if it is the one `id` names; a SUPERSEDED error otherwise. */
function theSource(id: number): Source {
  if (!source) throw new Error('Nothing is open.');
  if (source.id !== id) throw superseded();
  return source;
}

/** The open source `key` names, its stream planned for the key's device. */
function sourceFor(key: SourceKey): Source {
  const s = theSource(key.source);
  const size = key.size ?? s.prediction?.size;
  if ((key.device ?? 0) !== s.device || (s.prediction && size !== s.prediction.size)) {
    plan({ ...settings, device: key.device ?? 0, ...(size !== undefined ? { size } : {}) });
  }
  return s;
}

/** OOMs by request index of full replays, by settingsId (a few: the view's and a comparison's). */
const oomMaps = new Map<string, Map<number, ReplayOom>>();

function keepOoms(id: string, ooms: readonly ReplayOom[]): Map<number, ReplayOom> {
  const map = oomsByRequest(ooms);
  oomMaps.delete(id);
  if (oomMaps.size >= 8) oomMaps.delete(oomMaps.keys().next().value!);
  oomMaps.set(id, map);
  return map;
}

/** The OOMs of a replay under `at` (replayed here, stats only, when not kept). */
function oomsOf(at: ReplaySettings): Map<number, ReplayOom> {
  const id = settingsId(at);
  const kept = oomMaps.get(id);
  if (kept) return kept;
  const { stream, options } = plan(at);
  return keepOoms(id, replay(stream, { ...options, statsOnly: true }).ooms);
}

/** Peak reserved memory of the source under its own config and cap (the slider's top does not move with the config). */
function ownPeak(s: Source, device: number, shown: ReplaySettings, shownPeak: number): number {
  const at = `${device}/${shown.size ?? ''}`;
  let peak = s.ownPeak.get(at);
  if (peak === undefined) {
    const own: ReplaySettings = { conf: null, capacityBytes: null, device, ...(shown.size !== undefined ? { size: shown.size } : {}) };
    if (settingsId(shown) === settingsId(own)) peak = shownPeak;
    else {
      const { stream, options } = plan(own);
      peak = replay(stream, { ...options, statsOnly: true }).atPeak.reserved;
      plan(shown);
    }
    s.ownPeak.set(at, peak);
  }
  return peak;
}

/** Devices a snapshot has a trace or segments for. */
function devicesOf(snapshot: Snapshot, traces: readonly TraceColumns[]): number[] {
  const devices = new Set<number>([0]);
  traces.forEach((t, d) => t.length > 0 && devices.add(d));
  for (const s of snapshot.segments) devices.add(s.device ?? 0);
  return [...devices].sort((a, b) => a - b);
}

type SummaryBase = Omit<ReplaySummary, 'key' | 'events' | 'stats' | 'ooms' | 'peakReserved' | 'ownPeakReserved' | 'coverage'>;
/** A view as the replay takes it; the call that asked adds its key. */
type KeylessView = Omit<CursorView, 'key'>;

/** How the source replays under `settings`: its request stream, the replay's options, the summary's facts. */
function plan(at: ReplaySettings): { stream: RequestStream; options: ReplayOptions; summary: SummaryBase } {
  if (!source) throw new Error('Nothing is open.');
  settings = at;
  const capacity = settings.capacityBytes !== null ? { kind: 'fraction' as const, bytes: settings.capacityBytes } : undefined;
  const insertedCalls = insertedCallsOf(settings);
  if (source.snapshot) {
    const devices = devicesOf(source.snapshot, source.traces);
    const device = settings.device ?? 0;
    if (!devices.includes(device)) throw new Error(`This snapshot has no device ${device} (it has ${devices.map((d) => `cuda:${d}`).join(', ')}).`);
    if (device !== source.device) {
      source.device = device;
      source.stream = null;
      source.allocIndex = null;
      source.stacks = null;
      source.requestOf = null;
      stopWarming();
      cursors.clear();
      oomMaps.clear();
      last = null;
    }
    if (source.prediction) predictAt(source, source.prediction, settings.size ?? source.prediction.size);
    const p = planSnapshotReplay(source.snapshot, {
      ...(settings.conf !== null ? { conf: settings.conf } : {}),
      ...(capacity ? { capacity } : {}),
      ...(source.stream ? { stream: source.stream } : {}),
      // A predicted run's segments: placed by the driver model (the recordings' addresses belong to their sizes).
      ...(source.prediction ? { addresses: 'simulated' as const } : {}),
      ...(source.traces[device] ? { trace: source.traces[device] } : {}),
      ...insertedCalls,
      device,
      sharedMemory: canShare(),
    });
    // Built once per source and device, in shared memory where the page can share it with the sweep workers.
    source.stream = p.stream;
    return {
      stream: p.stream,
      options: p.replayOptions,
      summary: {
        source: source.name,
        sourceKind: 'snapshot',
        conf: configToString(p.config),
        recordedConf: configToString(p.recorded),
        capacityBytes: settings.capacityBytes,
        capacity: p.capacity ?? null,
        inferredCap: p.inferredCap,
        recordedEmptyCache: [...p.stream.recordedEmptyCache],
        addresses: p.addresses,
        requests: p.stream.length,
        // A predicted run's entries would be the skeleton's, at its own sizes: none are listed.
        recordedEvents: source.prediction ? 0 : (source.traces[device]?.length ?? 0),
        device,
        devices,
        stepStarts: [],
        notes: p.notes,
        ...(source.prediction ? { prediction: predictionFacts(source.prediction) } : {}),
      },
    };
  }
  const parsed = settings.conf !== null ? parseAllocConf(settings.conf) : { config: DEFAULT_CONFIG, warnings: [] };
  const stream = source.stream!;
  const workloadCap = capacity ?? fractionCapacity(parsed.config.perProcessMemoryFraction, H200_TOTAL_MEMORY);
  return {
    stream,
    options: { config: parsed.config, addresses: 'simulated', ...(workloadCap ? { capacity: workloadCap } : {}), ...insertedCalls },
    summary: {
      source: source.name,
      sourceKind: 'workload',
      conf: configToString(parsed.config),
      recordedConf: '',
      capacityBytes: settings.capacityBytes,
      capacity: workloadCap ?? null,
      inferredCap: null,
      recordedEmptyCache: [],
      addresses: 'simulated',
      requests: stream.length,
      recordedEvents: 0,
      device: 0,
      devices: [0],
      stepStarts: [...stream.stepStarts],
      notes: [...parsed.warnings, ...stream.notes],
    },
  };
}

/** The source's stream at `size`: predicted once per size asked for; a new skeleton brings its own stacks. */
function predictAt(s: Source, p: PredictionSource, size: number): void {
  if (p.last && p.size === size && s.stream) return;
  const prediction = p.predictor.at(size);
  const skeleton = p.recordings.get(prediction.skeleton.name)!;
  if (skeleton.snapshot !== s.snapshot) {
    s.snapshot = skeleton.snapshot;
    s.traces = skeleton.traces;
    s.stacks = null;
    s.requestOf = null;
  }
  s.stream = canShare() ? sharedStream(prediction.stream) : prediction.stream;
  s.allocIndex = null;
  p.size = size;
  p.last = prediction;
}

/** What the page says of a prediction: the recordings' sizes, and how the sizes were fitted. */
function predictionFacts(p: PredictionSource): PredictionFacts {
  const last = p.last!;
  return {
    size: p.size,
    sizes: [...p.predictor.sizes],
    skeleton: last.skeleton,
    aligned: last.aligned,
    laws: last.laws,
    uncleanSites: last.uncleanSites.slice(0, 10),
    extrapolation: last.extrapolation,
    cudnnWorkspaces: last.cudnnWorkspaces,
  };
}

/**
 * The whole replay under `settings`; its events counted, kept only for an export. With `viewAt`, also
 * the state after that request (null: the last), taken as the replay passes it (no second replay up
 * to the cursor).
 */
function run(settings: ReplaySettings, { keepEvents = false, viewAt }: { keepEvents?: boolean; viewAt?: number | null | 'firstOom' } = {}): {
  result: ReplayResult;
  summary: SummaryBase;
  view: KeylessView | null;
} {
  const { stream, options, summary } = plan(settings);
  let view: KeylessView | null = null;
  // Clamped once the plan has built the source's stream (a new source has none before).
  const at = viewAt === undefined ? -1 : clampCursor(viewAt === 'firstOom' ? (stream.recordedOoms[0] ?? null) : viewAt);
  const visit =
    viewAt === undefined
      ? undefined
      : { after: at, see: (allocator: CachingAllocator, ooms: readonly ReplayOom[]) => (view = viewOf(allocator, at, oomsByRequest(ooms))) };
  const result = replay(stream, { ...options, keepEvents }, visit);
  // A predicted run under a cap is judged under the recordings' address layouts too; a split is said.
  const prediction = source?.prediction?.last;
  const split = prediction && options.capacity ? layoutNote(verdictUnderLayouts(stream, options, options.capacity, prediction.layouts, { all: true, driver: result })) : null;
  const said = [...replayNotes(result, PAGE_WORDS), ...oomVerdict(stream, result), ...(split ? [split] : [])];
  if (said.length > 0) summary.notes = [...summary.notes, ...said];
  return { result, summary, view };
}

const oomsByRequest = (ooms: readonly ReplayOom[]): Map<number, ReplayOom> => new Map(ooms.map((o) => [o.request, o]));

/** Cursors by settings, so that stepping and playing go on from where the view was (a few configs at
 * most: each keeps checkpoints, up to tens of MB on a large trace). */
const cursors = new Map<string, ReplayCursor>();

function cursorFor(at: ReplaySettings): ReplayCursor {
  const key = settingsId(at);
  let cursor = cursors.get(key);
  if (!cursor) {
    const { stream, options } = plan(at);
    cursor = new ReplayCursor(stream, options);
    // The view's and up to four compared configs' (each keeps checkpoints, up to tens of MB on a large trace).
    if (cursors.size >= 6) cursors.delete(cursors.keys().next().value!);
    cursors.set(key, cursor);
  }
  return cursor;
}

/** The pending slice of a cursor's warm-up, if any. */
let warming: ReturnType<typeof setTimeout> | null = null;

/**
 * A warm-up starts once the settings have rested this long. While a slider is dragged each step's
 * replay follows the last at once, and a warm-up begun between them (copies of the allocator every
 * few thousand requests, garbage for the next replay's collector) made a 470k-event trace's steps
 * about a third slower in the worker.
 */
const WARM_AFTER_MS = 250;

/**
 * Makes the checkpoints of the cursor for `settings` after a replay, in slices of a few milliseconds
 * with the worker free between them, so that the first seek anywhere is as quick as the next.
 */
function warmCursor(settings: ReplaySettings): void {
  stopWarming();
  const slice = (): void => {
    warming = null;
    const cursor = cursorFor(settings);
    if (!cursor.warm(cursor.every * 2)) warming = setTimeout(slice, 0);
  };
  warming = setTimeout(slice, WARM_AFTER_MS);
}

function stopWarming(): void {
  if (warming !== null) clearTimeout(warming);
  warming = null;
}

function allocIndexOf(stream: RequestStream): Int32Array {
  const at = new Int32Array(stream.idCount).fill(-1);
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) at[stream.id[i]!] = i;
  return at;
}

function viewOf(allocator: CachingAllocator, cursor: number, ooms: Map<number, ReplayOom>): KeylessView {
  source!.allocIndex ??= allocIndexOf(source!.stream!);
  const at = source!.allocIndex;
  return {
    cursor,
    stats: allocator.memoryStats(),
    fragmentation: fragmentation(allocator),
    layout: memoryLayout(allocator, (id) => (id >= 0 && id < at.length ? at[id]! : -1), poolNamesOf(source!.stream!)),
    oom: ooms.get(cursor)?.message ?? null,
    oomWhy: ooms.get(cursor)?.why ?? [],
    entry: source!.stream!.source[cursor] ?? -1,
  };
}

/** How the segment map names the stream's pools: '' for the default ones. */
function poolNamesOf(stream: RequestStream): string[] {
  return stream.pools.map((p, i) => (i === 0 ? '' : `private pool (${p[0]}, ${p[1]})`));
}

function timelineOf(result: ReplayResult): ReplayTimeline {
  return {
    allocated: result.series.allocated,
    reserved: result.series.reserved,
    // Where no free is deferred, active is allocated: the same array, sent once (structured clone
    // keeps the identity), not a copy (on a 1 GB snapshot, 60 MB).
    active: result.series.active,
    ooms: Int32Array.from(result.ooms.map((o) => o.request)),
    retries: Int32Array.from(result.series.retries),
  };
}

const timelineBuffers = (t: ReplayTimeline): ArrayBuffer[] =>
  [...new Set([t.allocated.buffer, t.reserved.buffer, t.active.buffer])] as ArrayBuffer[];

/** The cursor clamped to the source's requests. */
function clampCursor(cursor: number | null): number {
  const n = source?.stream?.length ?? 0;
  return cursor === null ? n - 1 : Math.max(0, Math.min(n - 1, cursor));
}

/** The allocator after `cursor` under `at`: at the end, the last full replay's own, when it ran under `at`. */
function allocatorAt(at: ReplaySettings, cursor: number): CachingAllocator {
  if (cursor === (source?.stream?.length ?? 0) - 1 && last && last.source === source && last.id === settingsId(at)) return last.end;
  return cursorFor(at).at(cursor);
}

/** The state after `cursor` under `settings`. */
function viewAt(settings: ReplaySettings, cursor: number, ooms: Map<number, ReplayOom>): KeylessView {
  return viewOf(allocatorAt(settings, cursor), cursor, ooms);
}

/** The source's request stream, built by planning a replay if none has been yet. */
function streamOf(s: Source): RequestStream {
  if (!s.stream) plan(settings);
  return s.stream!;
}

/** The program's marks on the source's requests (profiler ranges, user_metadata stretches). */
function annotationsOf(s: Source): TimelineAnnotation[] {
  const stream = streamOf(s);
  const details = s.traces[s.device]?.details;
  const external = s.snapshot?.external_annotations;
  const time = external?.length ? requestTimes(stream, details) : null;
  return timelineAnnotations(stream, details, external, s.device, time, () => entriesOf(s).requestOf);
}

/** Each allocation's category, once per stream (a prediction's size or another device brings another). */
const categoriesByStream = new WeakMap<RequestStream, Categories>();
function categoriesOf(s: Source): Categories {
  const stream = streamOf(s);
  let c = categoriesByStream.get(stream);
  if (!c) categoriesByStream.set(stream, (c = categorize(stream, s.traces[s.device]?.details)));
  return c;
}

/** Where the source's allocations were made (its stream built first, if no replay has yet). */
function stacksOf(s: Source): AllocationStacks {
  s.stacks ??= allocationStacks(streamOf(s), s.traces[s.device]?.details, s.snapshot);
  return s.stacks;
}

/** The device's trace, and which request each of its entries belongs to. */
function entriesOf(s: Source): { trace: TraceColumns | undefined; requestOf: Int32Array } {
  const stream = streamOf(s);
  const trace = s.traces[s.device];
  s.requestOf ??= requestOfEntries(stream, trace?.length ?? 0);
  return { trace, requestOf: s.requestOf };
}

function framesOf(s: Source, id: number): string[] {
  if (!s.snapshot) return [];
  const stack = stacksOf(s).stackOf(id);
  return typeof stack === 'string' ? [] : stack.map(frameLabel);
}

/** Result for the page, its buffers moved rather than copied. */
const moved = <T>(value: T, buffers: ArrayBuffer[]): T => transfer(value, buffers);

/** The worker's calls, one answer each (comlink carries calls, answers, errors and progress). Each
 * names the source it is for (the page's id), and a call for a source no longer held is refused. */
const api = {
  /**
   * Reads and parses a snapshot file (a File read here as a stream, off the page's thread and never
   * held whole, or its bytes); only a file that parses replaces the source (a bad one changes
   * nothing). The page hashes it meanwhile. `id`: what the page calls it.
   */
  async open(name: string, file: Blob | ArrayBuffer, onProgress: (fraction: number) => void, id: number): Promise<void> {
    const options = { onProgress, details: true };
    const { snapshot, traces } = file instanceof Blob ? await decodeSnapshotBlob(file, options) : decodeSnapshotForReplay(new Uint8Array(file), options);
    adopt({ id, name, snapshot, traces, stream: null, device: 0, allocIndex: null, stacks: null, requestOf: null, ownPeak: new Map(), prediction: null });
  },

  /**
   * A predicted run becomes the source: recordings of one program at two sizes or more (each a file or
   * its bytes, and the size it ran at), predicted at `size` (trace/predict). Refused, changing nothing,
   * when the recordings are not one program.
   */
  async openPrediction(files: { name: string; size: number; file: Blob | ArrayBuffer }[], size: number, onProgress: (fraction: number) => void, id: number): Promise<string> {
    const recordings: SizedRecording[] = [];
    const held = new Map<string, { snapshot: Snapshot; traces: TraceColumns[] }>();
    for (const [k, f] of files.entries()) {
      const options = { onProgress: (x: number) => onProgress((k + x) / files.length), details: true };
      let read;
      try {
        read = f.file instanceof Blob ? await decodeSnapshotBlob(f.file, options) : decodeSnapshotForReplay(new Uint8Array(f.file), options);
      } catch (e) {
        throw new Error(`${f.name}: ${(e as Error).message}`);
      }
      const { snapshot, traces } = read;
      const stream = planSnapshotReplay(snapshot, { ...(traces[0] ? { trace: traces[0] } : {}) }).stream;
      if (held.has(f.name)) throw new Error(`Two recordings are named ${f.name}: give each file its own name.`);
      held.set(f.name, { snapshot, traces });
      recordings.push({ name: f.name, size: f.size, stream, stacks: allocationStacks(stream, traces[0]?.details, snapshot) });
    }
    const predictor = new SizePredictor(recordings);
    const first = held.get(recordings[0]!.name)!;
    const name = `${recordings.map((r) => r.name).join(' + ')}, predicted`;
    const prediction: PredictionSource = { predictor, recordings: held, size, last: null, band: bandOfPredictor(predictor) };
    adopt({ id, name, snapshot: first.snapshot, traces: first.traces, stream: null, device: 0, allocIndex: null, stacks: null, requestOf: null, ownPeak: new Map(), prediction });
    return name;
  },

  /** Peak reserved and allocated memory and the first OOM of the predicted run at each of `sizes`, under the rest of `key`. */
  predictionCurve(key: ViewKey, sizes: number[]): CurvePoint[] {
    const s = theSource(key.source);
    if (!s.prediction) throw new Error('This source is no prediction.');
    const { layouts } = s.prediction.last!;
    const rows = sizes.map((size) => {
      const { stream, options } = plan({ ...settingsOf(key), size });
      const driver = replay(stream, { ...options, statsOnly: true });
      const { stats, ooms } = driver;
      // Near the cap, the verdict is most address layouts' (as predict --fit's; tried until most agree,
      // so a split the first two do not show goes unringed).
      const v = options.capacity ? verdictUnderLayouts(stream, options, options.capacity, layouts, { driver }) : null;
      const firstOom = ooms[0]?.request ?? null;
      // The run's own peaks where it ran uncapped (its replay just now); a capped run's are the cap's, not the prediction's.
      const known = options.capacity ? undefined : { prediction: s.prediction!.last!, peaks: { reserved: stats['reserved_bytes.all.peak']!, allocated: stats['allocated_bytes.all.peak']! } };
      const band = s.prediction!.band(size, options.config, known);
      return { size, peakReserved: stats['reserved_bytes.all.peak']!, peakAllocated: stats['allocated_bytes.all.peak']!, firstOom, fits: v ? v.fits : firstOom === null, split: v ? isSplit(v) : false, band: band.above, bandBelow: band.below };
    });
    // The stream goes back to the key's own size (seeks and stacks read it).
    plan(settingsOf(key));
    return rows;
  },

  /**
   * The largest size whose predicted run fits the key's cap, under the key's config and under it with
   * expandable_segments:True (the setting most worth trying), side by side; null when no cap applies.
   */
  predictionFit(key: ViewKey): (SizeFit & { cap: number })[] | null {
    const s = theSource(key.source);
    if (!s.prediction) throw new Error('This source is no prediction.');
    const at = settingsOf(key);
    const { options } = plan(at);
    const capacity = options.capacity;
    if (!capacity) return null;
    const { config } = options;
    const configs = config.expandableSegments ? [config] : [config, { ...config, expandableSegments: true }];
    const start = Math.round(Math.max(...s.prediction.predictor.sizes));
    const { layouts } = s.prediction.last!;
    const rows = sizeFits((size) => ({ ...plan({ ...at, size }), layouts }), configs, capacity, start, start * 64, s.prediction.band).map((f) => ({
      ...f,
      cap: capacity.bytes,
    }));
    plan(at);
    return rows;
  },

  /** The memory the key's run needs: its peak reserved, and which usual cards it fits (each replayed as the cap). */
  memoryNeeded(key: ViewKey): MemoryNeeded {
    theSource(key.source);
    const { stream, options } = plan(settingsOf(key));
    return memoryNeeded(stream, options.config);
  },

  /** A built-in workload becomes the source. */
  workload(workloadId: string, params: Record<string, number>, id: number): string {
    const workload = workloadById(workloadId);
    if (!workload) throw new Error(`There is no built-in workload "${workloadId}".`);
    const stream = sharedStream(workload.generate(params));
    const name = `${workload.name} (built-in workload)`;
    adopt({ id, name, snapshot: null, traces: [], stream, device: 0, allocIndex: null, stacks: null, requestOf: null, ownPeak: new Map(), prediction: null });
    return name;
  },

  /** Replays the source under `key`'s settings; the cursor rests on `cursor` (null: the last request;
   * 'firstOom': the recording's first OOM, where an out-of-memory observer's dump opens, or the last). */
  replay(key: ViewKey, cursor: number | null | 'firstOom'): { summary: ReplaySummary; timeline: ReplayTimeline; view: CursorView } {
    const s = theSource(key.source);
    const at = settingsOf(key);
    const { result, summary, view } = run(at, { viewAt: cursor });
    const id = settingsId(at);
    last = { id, source: s, end: result.allocator };
    keepOoms(id, result.ooms);
    const full: ReplaySummary = {
      ...summary,
      key,
      events: result.events.length,
      stats: result.stats,
      ooms: result.ooms,
      peakReserved: result.atPeak.reserved,
      ownPeakReserved: ownPeak(s, summary.device, at, result.atPeak.reserved),
      coverage: coverageOf(s.stream!),
    };
    if (result.ooms.length > 1) {
      full.notes = [
        ...full.notes,
        `${counted(result.ooms.length, 'request')} fail with OOM in this replay (largest ${formatSize(result.ooms.reduce((m, o) => Math.max(m, o.size), 0))}). ` +
          `PyTorch raises at the first, request ${result.ooms[0]!.request.toLocaleString('en-US')}; the ones after it count as if the program caught each error and went on.`,
      ];
    }
    const timeline = timelineOf(result);
    warmCursor(at);
    return moved({ summary: full, timeline, view: { ...view!, key } }, [...timelineBuffers(timeline), ...layoutBuffers(view!.layout)]);
  },

  /** The state after request `cursor` under `key`. */
  seek(key: ViewKey, cursor: number): CursorView {
    sourceFor(key);
    const at = settingsOf(key);
    const view = { ...viewAt(at, clampCursor(cursor), oomsOf(at)), key };
    return moved(view, layoutBuffers(view.layout));
  },

  /** The stack frames of an allocation (the block's logical id), when the trace has them. */
  frames(key: SourceKey, id: number): string[] {
    return framesOf(sourceFor(key), id);
  },

  /** Which code holds the memory after request `cursor` under `key`. */
  stacks(key: ViewKey, cursor: number): StackTree {
    const s = sourceFor(key);
    const { stackOf } = stacksOf(s);
    const tree = memoryByStack(memoryLayout(allocatorAt(settingsOf(key), clampCursor(cursor)), () => -1), stackOf);
    return moved(tree, [tree.parent.buffer, tree.end.buffer, tree.depth.buffer, tree.bytes.buffer, tree.blocks.buffer, tree.ids.buffer, tree.leaf.buffer] as ArrayBuffer[]);
  },

  /** Requested bytes over the requests of the allocations a stack view selects (under `key`'s OOMs: a failed alloc never existed). */
  stackSeries(key: ViewKey, selection: StackSelection): Float64Array {
    const s = sourceFor(key);
    const series = bytesOverTime(streamOf(s), stackMatcher(stacksOf(s), selection), new Set(oomsOf(settingsOf(key)).keys()));
    return moved(series, [series.buffer as ArrayBuffer]);
  },

  /**
   * What the memory is (trace/categories): each allocation's category (by logical id), requested bytes
   * after each request stacked by category (`failed`: the requests a replay refused, which never
   * existed), and the moment the program held the most (up to the first failed).
   */
  memoryKinds(key: SourceKey, failed: number[]): { of: Uint8Array; stacked: StackedCategories; peakRequest: number; atPeak: Float64Array; stepStarts: number[] } {
    const s = sourceFor(key);
    const stream = streamOf(s);
    const categories = categoriesOf(s);
    const stacked = stackedCategorySeries(stream, categories, new Set(failed));
    const first = failed.length > 0 ? Math.min(...failed) : stream.length - 1;
    const totals = categoryTotals(stream, categories, first);
    const of = categories.of.slice();
    return moved({ of, stacked, peakRequest: totals.peakRequest, atPeak: totals.atPeak, stepStarts: stepStarts(categories, annotationsOf(s)) }, [of.buffer, stacked.stacked.buffer, totals.atPeak.buffer] as ArrayBuffer[]);
  },

  /** The story of the key's OOM or peak, and the fixes, each replayed (trace/explain). */
  explain(key: ViewKey): Explanation {
    const s = sourceFor(key);
    const at = settingsOf(key);
    const { stream, options } = plan(at);
    const e = explainRun(stream, s.traces[s.device]?.details, stacksOf(s), {
      config: options.config,
      addresses: options.addresses ?? 'simulated',
      annotations: annotationsOf(s),
      ...(options.capacity ? { capacity: options.capacity } : {}),
    });
    // A predicted run that runs out of memory: the largest size that would not.
    if (s.prediction && e.firstOom !== null) {
      const size = at.size ?? s.prediction.size;
      const { layouts } = s.prediction.last!;
      const runAt = (other: number): ReplayResult => {
        const p = plan({ ...at, size: other });
        return replay(p.stream, { ...p.options, statsOnly: true });
      };
      // Judged as predict --fit judges a size: under most address layouts. A size that fits so (its
      // notes say the layouts split) needs no smaller one.
      const fits = (other: number): boolean => {
        const p = plan({ ...at, size: other });
        return p.options.capacity ? verdictUnderLayouts(p.stream, p.options, p.options.capacity, layouts).fits : runAt(other).ooms.length === 0;
      };
      const fix = fits(size) ? null : smallerSizeFix(size, runAt, fits);
      plan(at);
      if (fix) e.fixes = [...e.fixes, fix].sort((a, b) => compareRuns(a.result, b.result));
    }
    return e;
  },

  /** The open snapshot in brief, as recorded and under `conf` (set beside another recording). */
  digest(sourceId: number, conf: string | null): RecordingDigest {
    const s = theSource(sourceId);
    if (!s.snapshot) throw new Error('A built-in workload is not a recording: open a snapshot to compare it with another.');
    // Device 0's stream, as another file's digest replays; the one built for the view when it is that device's.
    const trace = s.traces[0];
    const d = recordingDigest(s.name, s.snapshot, { ...(trace ? { trace } : {}), ...(s.stream && s.device === 0 ? { stream: s.stream } : {}) }, conf);
    return moved(d, [d.allocated.buffer, d.reserved.buffer] as ArrayBuffer[]);
  },

  /** Whether the trace has times, and the program's annotations placed on the requests (a few, small; the
   * arrays they are placed with are not kept: on a 1 GB snapshot they would be ~150 MB). */
  timeAxis(key: SourceKey): { timed: boolean; annotations: TimelineAnnotation[] } {
    const s = sourceFor(key);
    const stream = streamOf(s);
    return { timed: hasTimes(stream, s.traces[s.device]?.details), annotations: annotationsOf(s) };
  },

  /** Each request's time_us (null: the trace has none), for the timeline drawn over time. */
  requestTimes(key: SourceKey): Float64Array | null {
    const s = sourceFor(key);
    const time = requestTimes(streamOf(s), s.traces[s.device]?.details);
    return time ? moved(time, [time.buffer as ArrayBuffer]) : null;
  },

  /** Rows [start, start + count) of the recording's trace (the event list). */
  events(key: SourceKey, start: number, count: number): EventRow[] {
    const { trace, requestOf } = entriesOf(sourceFor(key));
    return trace ? eventRows(trace, requestOf, start, Math.min(count, 2048)) : [];
  },

  /** What a search box query matches: its requests, and for text the ids whose stacks match. */
  search(key: SourceKey, input: string): { query: SearchQuery | null; matches: SearchMatches } {
    const s = sourceFor(key);
    const query = parseSearch(input);
    if (!query) return { query, matches: { requests: new Int32Array(0), ids: null } };
    const { trace, requestOf } = entriesOf(s);
    const matches = searchRequests(query, streamOf(s), trace, stacksOf(s), requestOf);
    return moved({ query, matches }, [matches.requests.buffer, ...(matches.ids ? [matches.ids.buffer] : [])] as ArrayBuffer[]);
  },

  /** The source's request stream, for a GPU stress run or a sweep on the page. */
  stream(key: SourceKey): RequestStream {
    return streamOf(sourceFor(key));
  },

  /** The replay under `key` as a PyTorch snapshot file (opens in pytorch.org/memory_viz). */
  exportRun(key: ViewKey, format: 'pickle' | 'json'): Uint8Array<ArrayBuffer> {
    const s = sourceFor(key);
    const at = settingsOf(key);
    const details = s.traces[s.device]?.details;
    const { result, summary } = run(at, { keepEvents: true });
    const snapshot = exportSnapshot(result, s.stream!, {
      config: parseAllocConf(summary.conf).config,
      device: s.device,
      ...(details ? { sourceDetails: details } : {}),
    });
    const bytes = encodeSnapshotFile(snapshot, format) as Uint8Array<ArrayBuffer>;
    return moved(bytes, [bytes.buffer]);
  },

  /** Replays the source under each config (the rest of `key` for all), with the state after `cursor`. */
  compare(key: ViewKey, confs: string[], cursor: number): CompareRun[] {
    sourceFor(key);
    const runs: CompareRun[] = confs.map((conf) => {
      const at = { ...settingsOf(key), conf };
      const { result, summary, view } = run(at, { viewAt: cursor });
      keepOoms(settingsId(at), result.ooms);
      return {
        conf: summary.conf,
        stats: result.stats,
        firstOom: result.ooms[0]?.request ?? null,
        peakReserved: result.atPeak.reserved,
        timeline: timelineOf(result),
        view: { ...view!, key: { ...key, conf } },
      };
    });
    return moved(runs, runs.flatMap((r) => [...timelineBuffers(r.timeline), ...layoutBuffers(r.view.layout)]));
  },

  /** The state after request `cursor` under each config compared. */
  compareSeek(key: ViewKey, confs: string[], cursor: number): CursorView[] {
    sourceFor(key);
    const c = clampCursor(cursor);
    const views = confs.map((conf) => {
      const at = { ...settingsOf(key), conf };
      return { ...viewAt(at, c, oomsOf(at)), key: { ...key, conf } };
    });
    return moved(views, views.flatMap((v) => layoutBuffers(v.layout)));
  },
};

/** A new source replaces the open one, with every cache of the last. */
function adopt(next: Source): void {
  source = next;
  settings = { conf: null, capacityBytes: null };
  last = null;
  oomMaps.clear();
  stopWarming();
  cursors.clear();
}

export type ReplayApi = typeof api;

expose(api);
