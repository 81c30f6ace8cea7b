// Parses snapshots, builds workloads and replays them off the main thread; answers every message
// with exactly one reply (the page counts them to know when it is idle).
/// <reference lib="webworker" />
import { configToString, DEFAULT_CONFIG, type AllocatorConfig } from '../allocator/config';
import { exportSnapshot } from '../trace/replay/snapshot-export';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { fragmentation } from '../trace/measures/fragmentation';
import { layoutBuffers, memoryLayout } from '../trace/measures/memory-layout';
import type { CachingAllocator } from '../allocator/caching-allocator';
import { replay, ReplayCursor, type ReplayOom, type ReplayOptions, type ReplayResult } from '../trace/replay/replay';
import { divergenceNote, planSnapshotReplay } from '../trace/replay/replay-snapshot';
import { RequestKind, type RequestStream } from '../trace/stream/request-stream';
import type { Snapshot } from '../trace/snapshot/snapshot';
import { decodeSnapshotFile, encodeSnapshotFile } from '../trace/snapshot/snapshot-file';
import { workloadById } from '../trace/stream/workloads';
import type { CompareRun, CursorView, FromWorker, ReplaySettings, ReplaySummary, ReplayTimeline, ToWorker } from './replay-protocol';

interface Source {
  name: string;
  snapshot: Snapshot | null;
  /** The request stream of `device`'s trace (built on the first replay of that device). */
  stream: RequestStream | null;
  device: number;
  /** Request index of each logical id's alloc (-1: before the trace began). */
  allocIndex: Int32Array | null;
}

let source: Source | null = null;
let settings: ReplaySettings = { conf: null, capacityBytes: null };
/** OOMs of the last full replay by request index, for the cursor view. */
let oomAt = new Map<number, ReplayOom>();
/** The last full replay, for an export. */
let last: { result: ReplayResult; config: AllocatorConfig } | null = null;
/** The configs of the last comparison, and their OOMs by request index. */
let compared: { settings: ReplaySettings; oomAt: Map<number, ReplayOom> }[] = [];

const post = (m: FromWorker, transfer: Transferable[] = []): void =>
  (self as unknown as DedicatedWorkerGlobalScope).postMessage(m, transfer);

/** Devices a snapshot has a trace or segments for. */
function devicesOf(snapshot: Snapshot): number[] {
  const devices = new Set<number>([0]);
  snapshot.device_traces.forEach((t, d) => t.length > 0 && devices.add(d));
  for (const s of snapshot.segments) devices.add(s.device ?? 0);
  return [...devices].sort((a, b) => a - b);
}

type SummaryBase = Omit<ReplaySummary, 'events' | 'stats' | 'ooms' | 'peakReserved'>;

/** How the source replays under `settings`: its request stream, the replay's options, the summary's facts. */
function plan(settings: ReplaySettings): { stream: RequestStream; options: ReplayOptions; summary: SummaryBase } {
  if (!source) throw new Error('Nothing is open.');
  const capacity = settings.capacityBytes !== null ? { kind: 'fraction' as const, bytes: settings.capacityBytes } : undefined;
  const actions = {
    ...(settings.emptyCacheAfter?.length ? { emptyCacheAfter: settings.emptyCacheAfter } : {}),
    ...(settings.resetPeakAfter?.length ? { resetPeakAfter: settings.resetPeakAfter } : {}),
  };
  if (source.snapshot) {
    const devices = devicesOf(source.snapshot);
    const device = settings.device ?? 0;
    if (!devices.includes(device)) throw new Error(`This snapshot has no device ${device} (it has ${devices.map((d) => `cuda:${d}`).join(', ')}).`);
    if (device !== source.device) {
      source.device = device;
      source.stream = null;
      source.allocIndex = null;
      cursors.clear();
    }
    const p = planSnapshotReplay(source.snapshot, {
      ...(settings.conf !== null ? { conf: settings.conf } : {}),
      ...(capacity ? { capacity } : {}),
      ...(source.stream ? { stream: source.stream } : {}),
      ...actions,
      device,
    });
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
        addresses: p.addresses,
        requests: p.stream.length,
        device,
        devices,
        stepStarts: [],
        notes: p.notes,
      },
    };
  }
  const parsed = settings.conf !== null ? parseAllocConf(settings.conf) : { config: DEFAULT_CONFIG, warnings: [] };
  const stream = source.stream!;
  return {
    stream,
    options: { config: parsed.config, addresses: 'simulated', ...(capacity ? { capacity } : {}), ...actions },
    summary: {
      source: source.name,
      sourceKind: 'workload',
      conf: configToString(parsed.config),
      recordedConf: '',
      capacityBytes: settings.capacityBytes,
      addresses: 'simulated',
      requests: stream.length,
      device: 0,
      devices: [0],
      stepStarts: [...stream.stepStarts],
      notes: [...parsed.warnings, ...stream.notes],
    },
  };
}

/** The whole replay under `settings` (up to `until`, when given). */
function run(settings: ReplaySettings, until?: number): { result: ReplayResult; summary: SummaryBase } {
  const { stream, options, summary } = plan(settings);
  const result = replay(stream, { ...options, ...(until !== undefined ? { until } : {}) });
  const note = divergenceNote(result);
  if (note) summary.notes = [...summary.notes, note];
  return { result, summary };
}

/** Cursors by settings, so that stepping and playing go on from where the view was (a few configs at most). */
const cursors = new Map<string, ReplayCursor>();

function cursorFor(settings: ReplaySettings): ReplayCursor {
  const key = JSON.stringify(settings);
  let cursor = cursors.get(key);
  if (!cursor) {
    const { stream, options } = plan(settings);
    cursor = new ReplayCursor(stream, options);
    if (cursors.size >= 8) cursors.delete(cursors.keys().next().value!);
    cursors.set(key, cursor);
  }
  return cursor;
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
    layout: memoryLayout(allocator, (id) => (id >= 0 && id < at.length ? at[id]! : -1)),
    oom: ooms.get(cursor)?.message ?? null,
    oomWhy: ooms.get(cursor)?.why ?? [],
  };
}

function timelineOf(result: ReplayResult): ReplayTimeline {
  return {
    allocated: result.series.allocated,
    reserved: result.series.reserved,
    active: result.series.active === result.series.allocated ? result.series.allocated.slice() : result.series.active,
    ooms: Int32Array.from(result.ooms.map((o) => o.request)),
    retries: Int32Array.from(result.series.retries),
  };
}

const timelineBuffers = (t: ReplayTimeline): ArrayBuffer[] =>
  [t.allocated.buffer, t.reserved.buffer, t.active.buffer] as ArrayBuffer[];

/** The cursor clamped to the source's requests. */
function clampCursor(cursor: number | null): number {
  const n = source?.stream?.length ?? 0;
  return cursor === null ? n - 1 : Math.max(0, Math.min(n - 1, cursor));
}

/** The state after `cursor` under `settings` (the full replay when the cursor is at its end). */
function viewAt(settings: ReplaySettings, full: ReplayResult | null, cursor: number, ooms: Map<number, ReplayOom>): CursorView {
  const atEnd = cursor === (source?.stream?.length ?? 0) - 1;
  return viewOf(full && atEnd ? full.allocator : cursorFor(settings).at(cursor), cursor, ooms);
}

function framesOf(id: number): string[] {
  const stream = source?.stream;
  const trace = source?.snapshot?.device_traces?.[source.device];
  const at = source?.allocIndex;
  if (!stream || !trace || !at || id < 0 || id >= at.length || at[id]! < 0) return [];
  const entry = trace[stream.source[at[id]!]!];
  return (entry?.frames ?? []).map((f) => `${f.name} ${f.filename}:${f.line}`);
}

function handle(m: ToWorker): void {
  if (m.type === 'open') {
    const snapshot = decodeSnapshotFile(new Uint8Array(m.bytes), { onProgress: (fraction) => post({ type: 'progress', fraction }) });
    // Only a file that parsed replaces the current source: a bad file leaves the view as it was.
    source = { name: m.name, snapshot, stream: null, device: 0, allocIndex: null };
    cursors.clear();
    post({ type: 'opened', name: m.name });
    return;
  }
  if (m.type === 'workload') {
    const workload = workloadById(m.id);
    if (!workload) throw new Error(`There is no built-in workload "${m.id}".`);
    const stream = workload.generate(m.params);
    source = { name: `${workload.name} (built-in workload)`, snapshot: null, stream, device: 0, allocIndex: null };
    cursors.clear();
    post({ type: 'opened', name: source.name });
    return;
  }
  if (m.type === 'stream') {
    if (!source) throw new Error('Nothing is open.');
    if (!source.stream) run(settings, -1);
    post({ type: 'stream', stream: source.stream! });
    return;
  }
  if (m.type === 'export') {
    if (!last || !source?.stream) throw new Error('Nothing has been replayed yet: there is nothing to export.');
    const trace = source.snapshot?.device_traces?.[source.device];
    const snapshot = exportSnapshot(last.result, source.stream, {
      config: last.config,
      device: source.device,
      ...(trace ? { sourceTrace: trace } : {}),
    });
    const bytes = encodeSnapshotFile(snapshot, m.format) as Uint8Array<ArrayBuffer>;
    post({ type: 'export', bytes, format: m.format }, [bytes.buffer]);
    return;
  }
  if (m.type === 'frames') {
    post({ type: 'frames', id: m.id, frames: framesOf(m.id) });
    return;
  }
  if (m.type === 'compare') {
    compared = m.confs.map((conf) => ({ settings: { ...m.base, conf }, oomAt: new Map() }));
    const runs: CompareRun[] = compared.map((c) => {
      const { result, summary } = run(c.settings);
      c.oomAt = new Map(result.ooms.map((o) => [o.request, o]));
      const view = viewAt(c.settings, result, clampCursor(m.cursor), c.oomAt);
      return { conf: summary.conf, stats: result.stats, peakReserved: result.atPeak.reserved, timeline: timelineOf(result), view };
    });
    const transfer = runs.flatMap((r) => [...timelineBuffers(r.timeline), ...layoutBuffers(r.view.layout)]);
    post({ type: 'compared', runs }, transfer);
    return;
  }
  if (m.type === 'compareSeek') {
    if (compared.length === 0) throw new Error('Nothing is being compared.');
    const cursor = clampCursor(m.cursor);
    const views = compared.map((c) => viewAt(c.settings, null, cursor, c.oomAt));
    post({ type: 'compareCursor', views }, views.flatMap((v) => layoutBuffers(v.layout)));
    return;
  }
  if (m.type === 'replay') {
    settings = m.settings;
    const { result, summary } = run(settings);
    last = { result, config: parseAllocConf(summary.conf).config };
    oomAt = new Map(result.ooms.map((o) => [o.request, o]));
    const cursor = clampCursor(m.cursor);
    const full: ReplaySummary = {
      ...summary,
      events: result.events.length,
      stats: result.stats,
      ooms: result.ooms,
      peakReserved: result.atPeak.reserved,
    };
    if (result.ooms.length > 0) full.notes = [...full.notes, `${result.ooms.length} requests failed with OOM (largest ${formatSize(Math.max(...result.ooms.map((o) => o.size)))}).`];
    const view = viewAt(settings, result, cursor, oomAt);
    const timeline = timelineOf(result);
    post({ type: 'result', summary: full, timeline, view }, [...timelineBuffers(timeline), ...layoutBuffers(view.layout)]);
    return;
  }
  // seek
  const cursor = clampCursor(m.cursor);
  const view = viewAt(settings, null, cursor, oomAt);
  post({ type: 'cursor', view }, layoutBuffers(view.layout));
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  try {
    handle(m);
  } catch (e) {
    post({
      type: 'error',
      message: (e as Error).message,
      ...(m.type === 'stream' ? { stream: true } : {}),
      ...(m.type === 'export' ? { export: true } : {}),
      ...(m.type === 'compare' || m.type === 'compareSeek' ? { compare: true } : {}),
    });
  }
};
