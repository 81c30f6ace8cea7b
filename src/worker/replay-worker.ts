// Parses snapshots, builds workloads and replays them off the main thread. The page calls the methods
// of `api` through comlink (state/replay-client.ts), each call answered once.
/// <reference lib="webworker" />
import { counted } from '../lib/counted';
import { fractionCapacity, H200_TOTAL_MEMORY } from '../allocator/capacity';
import { configToString, DEFAULT_CONFIG, type AllocatorConfig } from '../allocator/config';
import { exportSnapshot } from '../trace/replay/snapshot-export';
import { recordingDigest, type RecordingDigest } from '../trace/replay/recording-digest';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { fragmentation } from '../trace/measures/fragmentation';
import { layoutBuffers, memoryLayout } from '../trace/measures/memory-layout';
import type { CachingAllocator } from '../allocator/caching-allocator';
import { replay, ReplayCursor, type ReplayOom, type ReplayOptions, type ReplayResult } from '../trace/replay/replay';
import { oomVerdict, planSnapshotReplay, replayNotes } from '../trace/replay/replay-snapshot';
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
import type { CompareRun, CursorView, ReplaySummary, ReplayTimeline } from './replay-protocol';
import { canShare, sharedStream } from './shared-stream';
import { insertedCallsOf, type ReplaySettings } from './replay-settings';

interface Source {
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
}

let source: Source | null = null;
let settings: ReplaySettings = { conf: null, capacityBytes: null };
/** OOMs of the last full replay by request index, for the cursor view. */
let oomAt = new Map<number, ReplayOom>();
/** The last full replay's settings and config, for an export (which replays again, keeping the events). */
/** The last replay: its settings and config (for exports), and the allocator at its end, which a view
 * or a stack tree at the last request reads rather than replaying the trace again. */
let last: { settings: ReplaySettings; config: AllocatorConfig; source: Source; end: CachingAllocator } | null = null;
/** The configs of the last comparison, and their OOMs by request index. */
let compared: { settings: ReplaySettings; oomAt: Map<number, ReplayOom> }[] = [];

/** Devices a snapshot has a trace or segments for. */
function devicesOf(snapshot: Snapshot, traces: readonly TraceColumns[]): number[] {
  const devices = new Set<number>([0]);
  traces.forEach((t, d) => t.length > 0 && devices.add(d));
  for (const s of snapshot.segments) devices.add(s.device ?? 0);
  return [...devices].sort((a, b) => a - b);
}

type SummaryBase = Omit<ReplaySummary, 'events' | 'stats' | 'ooms' | 'peakReserved'>;

/** How the source replays under `settings`: its request stream, the replay's options, the summary's facts. */
function plan(settings: ReplaySettings): { stream: RequestStream; options: ReplayOptions; summary: SummaryBase } {
  if (!source) throw new Error('Nothing is open.');
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
    }
    const p = planSnapshotReplay(source.snapshot, {
      ...(settings.conf !== null ? { conf: settings.conf } : {}),
      ...(capacity ? { capacity } : {}),
      ...(source.stream ? { stream: source.stream } : {}),
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
        recordedEvents: source.traces[device]?.length ?? 0,
        device,
        devices,
        stepStarts: [],
        notes: p.notes,
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

/**
 * The whole replay under `settings`; its events counted, kept only for an export. With `viewAt`, also
 * the state after that request (null: the last), taken as the replay passes it (no second replay up
 * to the cursor).
 */
function run(settings: ReplaySettings, { keepEvents = false, viewAt }: { keepEvents?: boolean; viewAt?: number | null } = {}): {
  result: ReplayResult;
  summary: SummaryBase;
  view: CursorView | null;
} {
  const { stream, options, summary } = plan(settings);
  let view: CursorView | null = null;
  // Clamped once the plan has built the source's stream (a new source has none before).
  const at = viewAt === undefined ? -1 : clampCursor(viewAt);
  const visit =
    viewAt === undefined
      ? undefined
      : { after: at, see: (allocator: CachingAllocator, ooms: readonly ReplayOom[]) => (view = viewOf(allocator, at, oomsByRequest(ooms))) };
  const result = replay(stream, { ...options, keepEvents }, visit);
  const said = [...replayNotes(result), ...oomVerdict(stream, result)];
  if (said.length > 0) summary.notes = [...summary.notes, ...said];
  return { result, summary, view };
}

const oomsByRequest = (ooms: readonly ReplayOom[]): Map<number, ReplayOom> => new Map(ooms.map((o) => [o.request, o]));

/** Cursors by settings, so that stepping and playing go on from where the view was (a few configs at
 * most: each keeps checkpoints, up to tens of MB on a large trace). */
const cursors = new Map<string, ReplayCursor>();

function cursorFor(settings: ReplaySettings): ReplayCursor {
  const key = JSON.stringify(settings);
  let cursor = cursors.get(key);
  if (!cursor) {
    const { stream, options } = plan(settings);
    cursor = new ReplayCursor(stream, options);
    if (cursors.size >= 4) cursors.delete(cursors.keys().next().value!);
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

function viewOf(allocator: CachingAllocator, cursor: number, ooms: Map<number, ReplayOom>): CursorView {
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
  if (cursor === (source?.stream?.length ?? 0) - 1 && last && last.source === source && last.settings === at) return last.end;
  return cursorFor(at).at(cursor);
}

/** The state after `cursor` under `settings`. */
function viewAt(settings: ReplaySettings, cursor: number, ooms: Map<number, ReplayOom>): CursorView {
  return viewOf(allocatorAt(settings, cursor), cursor, ooms);
}

/** The source's request stream, built by planning a replay if none has been yet. */
function streamOf(s: Source): RequestStream {
  if (!s.stream) plan(settings);
  return s.stream!;
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

function framesOf(id: number): string[] {
  if (!source?.snapshot) return [];
  const stack = stacksOf(source).stackOf(id);
  return typeof stack === 'string' ? [] : stack.map(frameLabel);
}

/** The open source; an error when nothing is open. */
function theSource(): Source {
  if (!source) throw new Error('Nothing is open.');
  return source;
}

/** Result for the page, its buffers moved rather than copied. */
const moved = <T>(value: T, buffers: ArrayBuffer[]): T => transfer(value, buffers);

/** The worker's calls, one answer each (comlink carries calls, answers, errors and progress). */
const api = {
  /**
   * Reads and parses a snapshot file (a File read here as a stream, off the page's thread and never
   * held whole, or its bytes); only a file that parses replaces the source (a bad one changes
   * nothing). The page hashes it meanwhile.
   */
  async open(name: string, file: Blob | ArrayBuffer, onProgress: (fraction: number) => void): Promise<void> {
    const options = { onProgress, details: true };
    const { snapshot, traces } = file instanceof Blob ? await decodeSnapshotBlob(file, options) : decodeSnapshotForReplay(new Uint8Array(file), options);
    source = { name, snapshot, traces, stream: null, device: 0, allocIndex: null, stacks: null, requestOf: null };
    stopWarming();
    cursors.clear();
  },

  /** A built-in workload becomes the source. */
  workload(id: string, params: Record<string, number>): string {
    const workload = workloadById(id);
    if (!workload) throw new Error(`There is no built-in workload "${id}".`);
    const stream = sharedStream(workload.generate(params));
    source = { name: `${workload.name} (built-in workload)`, snapshot: null, traces: [], stream, device: 0, allocIndex: null, stacks: null, requestOf: null };
    stopWarming();
    cursors.clear();
    return source.name;
  },

  /** Replays the source under `next`; the cursor rests on `cursor` (null: the last request). */
  replay(next: ReplaySettings, cursor: number | null): { summary: ReplaySummary; timeline: ReplayTimeline; view: CursorView } {
    settings = next;
    const { result, summary, view } = run(settings, { viewAt: cursor });
    last = { settings, config: parseAllocConf(summary.conf).config, source: theSource(), end: result.allocator };
    oomAt = oomsByRequest(result.ooms);
    const full: ReplaySummary = {
      ...summary,
      events: result.events.length,
      stats: result.stats,
      ooms: result.ooms,
      peakReserved: result.atPeak.reserved,
    };
    if (result.ooms.length > 0) full.notes = [...full.notes, `${counted(result.ooms.length, 'request')} failed with OOM (largest ${formatSize(result.ooms.reduce((m, o) => Math.max(m, o.size), 0))}).`];
    const timeline = timelineOf(result);
    warmCursor(settings);
    return moved({ summary: full, timeline, view: view! }, [...timelineBuffers(timeline), ...layoutBuffers(view!.layout)]);
  },

  /** The state after request `cursor` under the last replay's settings. */
  seek(cursor: number): CursorView {
    const view = viewAt(settings, clampCursor(cursor), oomAt);
    return moved(view, layoutBuffers(view.layout));
  },

  /** The stack frames of an allocation (the block's logical id), when the trace has them. */
  frames(id: number): string[] {
    return framesOf(id);
  },

  /** Which code holds the memory after request `cursor` under the last replay's settings. */
  stacks(cursor: number): StackTree {
    const s = theSource();
    const { stackOf } = stacksOf(s);
    const tree = memoryByStack(memoryLayout(allocatorAt(settings, clampCursor(cursor)), () => -1), stackOf);
    return moved(tree, [tree.parent.buffer, tree.end.buffer, tree.depth.buffer, tree.bytes.buffer, tree.blocks.buffer, tree.ids.buffer, tree.leaf.buffer] as ArrayBuffer[]);
  },

  /** Requested bytes over the requests of the allocations a stack view selects (under the last replay's OOMs). */
  stackSeries(selection: StackSelection): Float64Array {
    const s = theSource();
    const series = bytesOverTime(streamOf(s), stackMatcher(stacksOf(s), selection), new Set(oomAt.keys()));
    return moved(series, [series.buffer as ArrayBuffer]);
  },

  /** The open snapshot in brief, as recorded and under `conf` (set beside another recording). */
  digest(conf: string | null): RecordingDigest {
    const s = theSource();
    if (!s.snapshot) throw new Error('A built-in workload is not a recording: open a snapshot to compare it with another.');
    // Device 0's stream, as another file's digest replays; the one built for the view when it is that device's.
    const trace = s.traces[0];
    const d = recordingDigest(s.name, s.snapshot, { ...(trace ? { trace } : {}), ...(s.stream && s.device === 0 ? { stream: s.stream } : {}) }, conf);
    return moved(d, [d.allocated.buffer, d.reserved.buffer] as ArrayBuffer[]);
  },

  /** Whether the trace has times, and the program's annotations placed on the requests (a few, small; the
   * arrays they are placed with are not kept: on a 1 GB snapshot they would be ~150 MB). */
  timeAxis(): { timed: boolean; annotations: TimelineAnnotation[] } {
    const s = theSource();
    const stream = streamOf(s);
    const details = s.traces[s.device]?.details;
    const external = s.snapshot?.external_annotations;
    const time = external?.length ? requestTimes(stream, details) : null;
    const annotations = timelineAnnotations(stream, details, external, s.device, time, () => entriesOf(s).requestOf);
    return { timed: hasTimes(stream, details), annotations };
  },

  /** Each request's time_us (null: the trace has none), for the timeline drawn over time. */
  requestTimes(): Float64Array | null {
    const s = theSource();
    const time = requestTimes(streamOf(s), s.traces[s.device]?.details);
    return time ? moved(time, [time.buffer as ArrayBuffer]) : null;
  },

  /** Rows [start, start + count) of the recording's trace (the event list). */
  events(start: number, count: number): EventRow[] {
    const { trace, requestOf } = entriesOf(theSource());
    return trace ? eventRows(trace, requestOf, start, Math.min(count, 2048)) : [];
  },

  /** What a search box query matches: its requests, and for text the ids whose stacks match. */
  search(input: string): { query: SearchQuery | null; matches: SearchMatches } {
    const s = theSource();
    const query = parseSearch(input);
    if (!query) return { query, matches: { requests: new Int32Array(0), ids: null } };
    const { trace, requestOf } = entriesOf(s);
    const matches = searchRequests(query, streamOf(s), trace, stacksOf(s), requestOf);
    return moved({ query, matches }, [matches.requests.buffer, ...(matches.ids ? [matches.ids.buffer] : [])] as ArrayBuffer[]);
  },

  /** The source's request stream, for a GPU stress run or a sweep on the page. */
  stream(): RequestStream {
    return streamOf(theSource());
  },

  /** The last replay as a PyTorch snapshot file (opens in pytorch.org/memory_viz). */
  exportRun(format: 'pickle' | 'json'): Uint8Array<ArrayBuffer> {
    if (!last || !source?.stream) throw new Error('Nothing has been replayed yet: there is nothing to export.');
    const details = source.traces[source.device]?.details;
    const { result } = run(last.settings, { keepEvents: true });
    const snapshot = exportSnapshot(result, source.stream, {
      config: last.config,
      device: source.device,
      ...(details ? { sourceDetails: details } : {}),
    });
    const bytes = encodeSnapshotFile(snapshot, format) as Uint8Array<ArrayBuffer>;
    return moved(bytes, [bytes.buffer]);
  },

  /** Replays the source under each config (the rest of `base` for all), with the state after `cursor`. */
  compare(confs: string[], base: ReplaySettings, cursor: number): CompareRun[] {
    compared = confs.map((conf) => ({ settings: { ...base, conf }, oomAt: new Map() }));
    const runs: CompareRun[] = compared.map((c) => {
      const { result, summary, view } = run(c.settings, { viewAt: cursor });
      c.oomAt = oomsByRequest(result.ooms);
      return { conf: summary.conf, stats: result.stats, peakReserved: result.atPeak.reserved, timeline: timelineOf(result), view: view! };
    });
    return moved(runs, runs.flatMap((r) => [...timelineBuffers(r.timeline), ...layoutBuffers(r.view.layout)]));
  },

  /** The state after request `cursor` under each config of the last comparison. */
  compareSeek(cursor: number): CursorView[] {
    if (compared.length === 0) throw new Error('Nothing is being compared.');
    const at = clampCursor(cursor);
    const views = compared.map((c) => viewAt(c.settings, at, c.oomAt));
    return moved(views, views.flatMap((v) => layoutBuffers(v.layout)));
  },
};

export type ReplayApi = typeof api;

expose(api);
