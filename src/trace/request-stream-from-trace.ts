// A recorded device trace -> the request stream behind it, as memory_viz reads traces: each
// (address, reuse) gets a logical id, so ids survive a change of config while addresses do not.
import { MiB, SMALL_BUFFER } from '../allocator/constants';
import { roundSize } from '../allocator/sizes';
import { DEFAULT_CONFIG, type AllocatorConfig } from '../allocator/config';
import { AddressTable } from './address-table';
import {
  RequestStreamBuilder,
  type InitialBlock,
  type InitialSegment,
  type RequestStream,
} from './request-stream';
import type { Snapshot, SnapshotSegment } from './snapshot';
import { TraceCode, traceColumnsFromEntries, type TraceColumns } from './trace-columns';

export interface TraceStreamOptions {
  device?: number;
  /** The recording's config (it decides how blocks made before the trace were rounded). */
  config?: AllocatorConfig;
}

export function requestStreamFromSnapshot(snapshot: Snapshot, options: TraceStreamOptions = {}): RequestStream {
  const entries = snapshot.device_traces[options.device ?? 0] ?? [];
  return requestStreamFromTrace(traceColumnsFromEntries(entries), snapshot.segments, options);
}

/** `trace`: the device's trace in columns; `segments`: the snapshot's final segments (all devices). */
export function requestStreamFromTrace(
  trace: TraceColumns,
  segments: readonly SnapshotSegment[],
  { device = 0, config = DEFAULT_CONFIG }: TraceStreamOptions = {},
): RequestStream {
  const finalSegments = segments.filter((s) => (s.device ?? 0) === device);
  // Each alloc and free_requested is one request (an oom two): about 2/3 of the entries.
  const b = new RequestStreamBuilder(Math.ceil(trace.length * 0.7));
  const liveBlocks = new AddressTable(); // addr -> id
  const liveSegments = new Map<number, number>(); // addr -> size, made during the trace
  const initialSegments: InitialSegment[] = [];
  const initialBlocks: InitialBlock[] = [];
  const recordedSegments: { addr: number; size: number }[] = [];
  const failedInRecording = new Set<number>();
  const notes: string[] = [];
  let expandable = false;

  const { action, addr: addrs, size: sizes, stream: streams } = trace;
  for (let i = 0; i < trace.length; i++) {
    const addr = addrs[i]!;
    const size = sizes[i]!;
    switch (action[i]) {
      case TraceCode.alloc: {
        const id = b.newId();
        liveBlocks.set(addr, id);
        b.alloc(id, size, streams[i]!, i);
        break;
      }
      case TraceCode.free_requested: {
        let id = liveBlocks.get(addr);
        if (id < 0) {
          // Allocated before recording began.
          id = b.newId();
          initialBlocks.push({ id, addr, size: 0, requested: size, stream: streams[i]! });
        } else {
          liveBlocks.delete(addr);
        }
        b.free(id, size, streams[i]!, i);
        break;
      }
      case TraceCode.segment_alloc:
        recordedSegments.push({ addr, size });
        liveSegments.set(addr, size);
        break;
      case TraceCode.segment_free:
        if (!liveSegments.delete(addr)) {
          initialSegments.push({ addr, size, stream: streams[i]!, small: size === SMALL_BUFFER });
        }
        break;
      case TraceCode.oom: {
        // The tensor never existed in the recording, so nothing frees it there.
        const id = b.newId();
        failedInRecording.add(id);
        b.alloc(id, size, streams[i]!, i);
        b.free(id, size, streams[i]!, -1);
        break;
      }
      case TraceCode.segment_map:
      case TraceCode.segment_unmap:
        expandable = true;
        break;
      default:
        break; // free_completed repeats free_requested here (no cross-stream events); snapshot markers
    }
  }

  // Segments and blocks alive at the end that no event made were there from the start.
  const finalSizes = new Map<number, { size: number; requested: number }>();
  for (const segment of finalSegments) {
    if (segment.is_expandable) expandable = true;
    if (!liveSegments.has(segment.address)) {
      initialSegments.push({
        addr: segment.address,
        size: segment.total_size,
        stream: segment.stream,
        small: segment.segment_type === 'small',
      });
    }
    let addr = segment.address;
    for (const block of segment.blocks) {
      if (block.state !== 'inactive') {
        finalSizes.set(addr, { size: block.size, requested: block.requested_size });
        if (liveBlocks.get(addr) < 0 && !liveSegments.has(segment.address)) {
          const id = b.newId();
          initialBlocks.push({ id, addr, size: block.size, requested: block.requested_size, stream: segment.stream });
        }
      }
      addr += block.size;
    }
  }

  inferInitialBlockSizes(initialBlocks, initialSegments, finalSizes, config);
  if (initialSegments.length > 0 || initialBlocks.length > 0) {
    notes.push(
      `The trace begins mid-run: ${initialSegments.length} segments and ${initialBlocks.length} live blocks existed ` +
        'before its first event; they are rebuilt from the final snapshot and the frees of blocks the trace never saw allocated.',
    );
  }
  if (failedInRecording.size > 0) {
    notes.push(
      `${failedInRecording.size} requests failed with OOM in the recording, so their lifetime is unknown; where a replay ` +
        'lets one succeed, splitscope frees it right after its allocation.',
    );
  }
  if (expandable) {
    notes.push('The recording used expandable_segments; its segment_map/segment_unmap events are not replayed.');
  }
  return b.finish({ failedInRecording, initialSegments, initialBlocks, recordedSegments, notes });
}

/**
 * Sizes of blocks freed before the final snapshot could show them: the rounded request, grown to the
 * next known block (or the segment's end) when the gap is too small to have been split off
 * (a large-pool block is split only when more than 1 MiB remains).
 */
function inferInitialBlockSizes(
  blocks: InitialBlock[],
  segments: InitialSegment[],
  finalSizes: Map<number, { size: number }>,
  config: AllocatorConfig,
): void {
  const sorted = [...blocks].sort((x, y) => x.addr - y.addr);
  const segmentsByAddr = [...segments].sort((x, y) => x.addr - y.addr);
  for (let i = 0; i < sorted.length; i++) {
    const block = sorted[i]!;
    const known = finalSizes.get(block.addr);
    if (block.size > 0) continue;
    if (known) {
      block.size = known.size;
      continue;
    }
    const segment = segmentsByAddr.find((s) => s.addr <= block.addr && block.addr < s.addr + s.size);
    const rounded = roundSize(block.requested, config);
    if (!segment) {
      block.size = rounded;
      continue;
    }
    const next = sorted[i + 1];
    const boundary =
      next && next.addr < segment.addr + segment.size ? next.addr : segment.addr + segment.size;
    const gap = boundary - (block.addr + rounded);
    block.size = !segment.small && gap > 0 && gap <= 1 * MiB ? boundary - block.addr : rounded;
  }
}

