// A simulated run as a torch.cuda.memory._dump_snapshot() structure, for pytorch.org/memory_viz.
import type { Block } from '../../allocator/block';
import { divisionLabel, maxSplitSizeStat, configToString, type AllocatorConfig } from '../../allocator/config';
import { ACTION_NAMES } from '../../allocator/trace-action';
import type { ReplayResult } from './replay';
import type { RequestStream } from '../stream/request-stream';
import type { AllocatorSettings, Frame, Snapshot, SnapshotBlock, SnapshotSegment, TraceEntry } from '../snapshot/snapshot';
import type { TraceDetails } from '../snapshot/trace-columns';

export interface ExportOptions {
  config: AllocatorConfig;
  /** The times and stack frames of the source trace the stream came from. */
  sourceDetails?: TraceDetails;
  device?: number;
}

export function exportSnapshot(run: ReplayResult, stream: RequestStream, options: ExportOptions): Snapshot {
  const { config, sourceDetails: details } = options;
  const device = options.device ?? 0;
  /** The source entry of a request, -1 for none (a synthetic request, or no details). */
  const sourceOf = (requestIndex: number): number => (details && requestIndex >= 0 ? stream.source[requestIndex]! : -1);
  const framesAt = (entry: number): Frame[] => {
    const k = entry >= 0 ? details!.frames[entry]! : -1;
    return k >= 0 ? details!.frameLists[k]! : [];
  };
  // Frames of the request that allocated each live block (by request id).
  const allocRequest = new Int32Array(stream.idCount).fill(-1);
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === 0) allocRequest[stream.id[i]!] = i;
  const framesOfBlock = (b: Block): Frame[] => (b.tag >= 0 ? framesAt(sourceOf(allocRequest[b.tag]!)) : []);

  const segments: SnapshotSegment[] = run.allocator.segmentsByAddress().map((segment) => {
    const blocks: SnapshotBlock[] = [];
    let allocated = 0;
    let requested = 0;
    for (let b: Block | null = segment.head; b?.mapped; b = b.next) {
      blocks.push({
        address: b.addr,
        size: b.size,
        requested_size: b.requestedSize,
        state: b.allocated ? 'active_allocated' : 'inactive',
        frames: b.allocated ? framesOfBlock(b) : [],
      });
      if (b.allocated) {
        allocated += b.size;
        requested += b.requestedSize;
      }
    }
    return {
      device,
      address: segment.addr,
      total_size: segment.size,
      allocated_size: allocated,
      active_size: allocated,
      requested_size: requested,
      stream: segment.stream,
      segment_type: segment.small ? 'small' : 'large',
      segment_pool_id: [0, 0],
      is_expandable: segment.expandable,
      frames: [],
      blocks,
    };
  });

  const { events } = run;
  const trace: TraceEntry[] = new Array<TraceEntry>(events.length);
  for (let i = 0; i < events.length; i++) {
    const action = ACTION_NAMES[events.action[i]!]!;
    const source = sourceOf(events.request[i]!);
    // In torch 2.11's order and shape (an oom's device_free where the others have addr; what the program
    // attached, kept), which the reader's fast path reads back as columns.
    const entry = (
      action === 'oom'
        ? { action, device_free: events.addr[i]!, size: events.size[i]!, stream: events.stream[i]! }
        : { action, addr: events.addr[i]!, size: events.size[i]!, stream: events.stream[i]! }
    ) as TraceEntry;
    const time = source >= 0 ? details!.time[source]! : NaN;
    entry.time_us = Number.isNaN(time) ? i : time;
    const context = source >= 0 ? details!.context.get(source) : undefined;
    entry.compile_context = context?.compile_context || 'N/A';
    entry.user_metadata = context?.user_metadata ?? '';
    entry.frames = action.startsWith('segment_') ? [] : framesAt(source);
    trace[i] = entry;
  }

  const device_traces: TraceEntry[][] = [];
  for (let d = 0; d < device; d++) device_traces.push([]);
  device_traces.push(trace);
  return { segments, device_traces, allocator_settings: allocatorSettings(config) };
}

/** allocator_settings as torch 2.11 writes it. */
export function allocatorSettings(config: AllocatorConfig): AllocatorSettings {
  const divisions: Record<string, number> = {};
  config.roundupPower2Divisions.forEach((d, i) => (divisions[divisionLabel(i)] = d));
  return {
    PYTORCH_CUDA_ALLOC_CONF: configToString(config),
    max_split_size: maxSplitSizeStat(config),
    garbage_collection_threshold: config.garbageCollectionThreshold,
    expandable_segments: config.expandableSegments,
    roundup_power2_divisions: divisions,
  };
}
