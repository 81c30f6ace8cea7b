// Parses snapshots, builds workloads and replays them off the main thread; answers every message
// with exactly one reply (the page counts them to know when it is idle).
/// <reference lib="webworker" />
import { configToString, DEFAULT_CONFIG, type AllocatorConfig } from '../allocator/config';
import { exportSnapshot } from '../trace/snapshot-export';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { fragmentation } from '../trace/fragmentation';
import { layoutBuffers, memoryLayout } from '../trace/memory-layout';
import { replay, type ReplayResult } from '../trace/replay';
import { replaySnapshot } from '../trace/replay-snapshot';
import { RequestKind, type RequestStream } from '../trace/request-stream';
import type { Snapshot } from '../trace/snapshot';
import { decodeSnapshotFile, encodeSnapshotFile } from '../trace/snapshot-file';
import { workloadById } from '../trace/workloads';
import type { CursorView, FromWorker, ReplaySettings, ReplaySummary, ToWorker } from './replay-protocol';

interface Source {
  name: string;
  snapshot: Snapshot | null;
  stream: RequestStream | null;
  /** Request index of each logical id's alloc (-1: before the trace began). */
  allocIndex: Int32Array | null;
}

let source: Source | null = null;
let settings: ReplaySettings = { conf: null, capacityBytes: null };
/** OOMs of the last full replay by request index, for the cursor view. */
let oomAt = new Map<number, string>();
/** The last full replay, for an export. */
let last: { result: ReplayResult; config: AllocatorConfig } | null = null;

const post = (m: FromWorker, transfer: Transferable[] = []): void =>
  (self as unknown as DedicatedWorkerGlobalScope).postMessage(m, transfer);

function run(until?: number): { result: ReplayResult; summary: Omit<ReplaySummary, 'events' | 'stats' | 'ooms' | 'peakReserved'> } {
  if (!source) throw new Error('Nothing is open.');
  const capacity = settings.capacityBytes !== null ? { kind: 'fraction' as const, bytes: settings.capacityBytes } : undefined;
  if (source.snapshot) {
    const r = replaySnapshot(source.snapshot, {
      ...(settings.conf !== null ? { conf: settings.conf } : {}),
      ...(capacity ? { capacity } : {}),
      ...(source.stream ? { stream: source.stream } : {}),
      ...(until !== undefined ? { until } : {}),
    });
    source.stream = r.stream;
    return {
      result: r.result,
      summary: {
        source: source.name,
        sourceKind: 'snapshot',
        conf: configToString(r.config),
        recordedConf: configToString(r.recorded),
        capacityBytes: settings.capacityBytes,
        addresses: r.addresses,
        requests: r.stream.length,
        notes: r.notes,
      },
    };
  }
  const parsed = settings.conf !== null ? parseAllocConf(settings.conf) : { config: DEFAULT_CONFIG, warnings: [] };
  const stream = source.stream!;
  const result = replay(stream, {
    config: parsed.config,
    addresses: 'simulated',
    ...(capacity ? { capacity } : {}),
    ...(until !== undefined ? { until } : {}),
  });
  return {
    result,
    summary: {
      source: source.name,
      sourceKind: 'workload',
      conf: configToString(parsed.config),
      recordedConf: '',
      capacityBytes: settings.capacityBytes,
      addresses: 'simulated',
      requests: stream.length,
      notes: [...parsed.warnings, ...stream.notes],
    },
  };
}

function allocIndexOf(stream: RequestStream): Int32Array {
  const at = new Int32Array(stream.idCount).fill(-1);
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) at[stream.id[i]!] = i;
  return at;
}

function viewOf(result: ReplayResult, cursor: number): CursorView {
  source!.allocIndex ??= allocIndexOf(source!.stream!);
  const at = source!.allocIndex;
  return {
    cursor,
    stats: result.allocator.memoryStats(),
    fragmentation: fragmentation(result.allocator),
    layout: memoryLayout(result.allocator, (id) => (id >= 0 && id < at.length ? at[id]! : -1)),
    oom: oomAt.get(cursor) ?? null,
  };
}

function framesOf(id: number): string[] {
  const stream = source?.stream;
  const trace = source?.snapshot?.device_traces?.[0];
  const at = source?.allocIndex;
  if (!stream || !trace || !at || id < 0 || id >= at.length || at[id]! < 0) return [];
  const entry = trace[stream.source[at[id]!]!];
  return (entry?.frames ?? []).map((f) => `${f.name} ${f.filename}:${f.line}`);
}

function handle(m: ToWorker): void {
  if (m.type === 'open') {
    const snapshot = decodeSnapshotFile(new Uint8Array(m.bytes), { onProgress: (fraction) => post({ type: 'progress', fraction }) });
    // Only a file that parsed replaces the current source: a bad file leaves the view as it was.
    source = { name: m.name, snapshot, stream: null, allocIndex: null };
    post({ type: 'opened', name: m.name });
    return;
  }
  if (m.type === 'workload') {
    const workload = workloadById(m.id);
    if (!workload) throw new Error(`There is no built-in workload "${m.id}".`);
    const stream = workload.generate(m.params);
    source = { name: `${workload.name} (built-in workload)`, snapshot: null, stream, allocIndex: null };
    post({ type: 'opened', name: source.name });
    return;
  }
  if (m.type === 'stream') {
    if (!source) throw new Error('Nothing is open.');
    if (!source.stream) run(-1);
    post({ type: 'stream', stream: source.stream! });
    return;
  }
  if (m.type === 'export') {
    if (!last || !source?.stream) throw new Error('Nothing has been replayed yet: there is nothing to export.');
    const snapshot = exportSnapshot(last.result, source.stream, {
      config: last.config,
      ...(source.snapshot?.device_traces?.[0] ? { sourceTrace: source.snapshot.device_traces[0] } : {}),
    });
    const bytes = encodeSnapshotFile(snapshot, m.format) as Uint8Array<ArrayBuffer>;
    post({ type: 'export', bytes, format: m.format }, [bytes.buffer]);
    return;
  }
  if (m.type === 'frames') {
    post({ type: 'frames', id: m.id, frames: framesOf(m.id) });
    return;
  }
  if (m.type === 'replay') {
    settings = m.settings;
    const { result, summary } = run();
    last = { result, config: parseAllocConf(summary.conf).config };
    oomAt = new Map(result.ooms.map((o) => [o.request, o.message]));
    const n = summary.requests;
    const cursor = m.cursor === null ? n - 1 : Math.max(0, Math.min(n - 1, m.cursor));
    const full: ReplaySummary = {
      ...summary,
      events: result.events.length,
      stats: result.stats,
      ooms: result.ooms,
      peakReserved: result.atPeak.reserved,
    };
    if (result.ooms.length > 0) full.notes = [...full.notes, `${result.ooms.length} requests failed with OOM (largest ${formatSize(Math.max(...result.ooms.map((o) => o.size)))}).`];
    const view = cursor === n - 1 ? viewOf(result, cursor) : viewOf(run(cursor).result, cursor);
    const timeline = {
      allocated: result.series.allocated,
      reserved: result.series.reserved,
      active: result.series.active === result.series.allocated ? result.series.allocated.slice() : result.series.active,
      ooms: Int32Array.from(result.ooms.map((o) => o.request)),
      retries: Int32Array.from(result.series.retries),
    };
    const transfer = [timeline.allocated.buffer, timeline.reserved.buffer, timeline.active.buffer, ...layoutBuffers(view.layout)];
    post({ type: 'result', summary: full, timeline, view }, transfer as Transferable[]);
    return;
  }
  // seek
  const n = source?.stream?.length ?? 0;
  const cursor = Math.max(0, Math.min(n - 1, m.cursor));
  const view = viewOf(run(cursor).result, cursor);
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
    });
  }
};
