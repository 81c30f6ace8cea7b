// A recorded device trace -> the request stream behind it, as memory_viz reads traces: each
// (address, reuse) gets a logical id, so ids survive a change of config while addresses do not.
import { LARGE_BUFFER, MiB, SMALL_BUFFER } from '../../allocator/constants';
import { roundSize } from '../../allocator/sizes';
import { DEFAULT_CONFIG, type AllocatorConfig } from '../../allocator/config';
import { AddressTable } from '../../lib/address-table';
import {
  RequestStreamBuilder,
  type InitialBlock,
  type InitialSegment,
  type RequestStream,
} from './request-stream';
import type { Snapshot, SnapshotSegment } from '../snapshot/snapshot';
import { Action } from '../../allocator/trace-action';
import { traceColumnsFromEntries, type TraceColumns } from '../snapshot/trace-columns';

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
  const recordedMappings: { addr: number; size: number }[] = [];
  /** segment_map (+1) and segment_unmap (-1) ranges in order, to work out what was mapped at the start. */
  const mappingChanges: { addr: number; size: number; sign: 1 | -1 }[] = [];
  const failedInRecording = new Set<number>();
  const notes: string[] = [];

  const { action, addr: addrs, size: sizes, stream: streams } = trace;
  for (let i = 0; i < trace.length; i++) {
    const addr = addrs[i]!;
    const size = sizes[i]!;
    switch (action[i]) {
      case Action.alloc: {
        const id = b.newId();
        liveBlocks.set(addr, id);
        b.alloc(id, size, streams[i]!, i);
        break;
      }
      case Action.free_requested: {
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
      case Action.segment_alloc:
        recordedSegments.push({ addr, size });
        liveSegments.set(addr, size);
        break;
      case Action.segment_free:
        if (!liveSegments.delete(addr)) {
          initialSegments.push({ addr, size, stream: streams[i]!, small: size === SMALL_BUFFER });
        }
        break;
      case Action.oom: {
        // The tensor never existed in the recording, so nothing frees it there.
        const id = b.newId();
        failedInRecording.add(id);
        b.alloc(id, size, streams[i]!, i);
        b.free(id, size, streams[i]!, -1);
        break;
      }
      case Action.segment_map:
        recordedMappings.push({ addr, size });
        mappingChanges.push({ addr, size, sign: 1 });
        break;
      case Action.segment_unmap:
        mappingChanges.push({ addr, size, sign: -1 });
        break;
      default:
        break; // free_completed repeats free_requested here (no cross-stream events); snapshot markers
    }
  }

  // Segments and blocks alive at the end that no event made were there from the start.
  const finalSizes = new Map<number, { size: number; requested: number }>();
  for (const segment of finalSegments) {
    if (!segment.is_expandable && !liveSegments.has(segment.address)) {
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

  initialSegments.push(...initialMappings(finalSegments, mappingChanges));
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
  return b.finish({ failedInRecording, initialSegments, initialBlocks, recordedSegments, recordedMappings, notes });
}

/**
 * expandable_segments: the ranges mapped before the trace began. The final snapshot shows what is
 * mapped at the end; undoing the trace's maps and unmaps, last first, leaves what was there at the start.
 */
function initialMappings(
  finalSegments: readonly SnapshotSegment[],
  changes: readonly { addr: number; size: number; sign: 1 | -1 }[],
): InitialSegment[] {
  const finalRanges = finalSegments.filter((s) => s.is_expandable);
  let ranges: [number, number][] = finalRanges.map((s) => [s.address, s.address + s.total_size]);
  for (let i = changes.length - 1; i >= 0; i--) {
    const { addr, size, sign } = changes[i]!;
    ranges = sign > 0 ? subtractRange(ranges, addr, addr + size) : addRange(ranges, addr, addr + size);
  }
  return ranges.map(([lo, hi]) => {
    // Its pool and stream are those of the nearest final range (the same segment, as ranges of
    // different segments lie a device's memory apart); with none, the page size tells the pool.
    let nearest: SnapshotSegment | undefined;
    for (const s of finalRanges) if (!nearest || Math.abs(s.address - lo) < Math.abs(nearest.address - lo)) nearest = s;
    return {
      addr: lo,
      size: hi - lo,
      stream: nearest?.stream ?? 0,
      small: nearest ? nearest.segment_type === 'small' : (hi - lo) % LARGE_BUFFER !== 0,
      expandable: true,
    };
  });
}

function subtractRange(ranges: [number, number][], lo: number, hi: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of ranges) {
    if (b <= lo || a >= hi) out.push([a, b]);
    else {
      if (a < lo) out.push([a, lo]);
      if (b > hi) out.push([hi, b]);
    }
  }
  return out;
}

function addRange(ranges: [number, number][], lo: number, hi: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of [...ranges, [lo, hi] as [number, number]].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
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
    // With expandable_segments any remainder of 512 B or more splits off.
    const unsplit = !segment.small && !segment.expandable && gap > 0 && gap <= 1 * MiB;
    block.size = unsplit ? boundary - block.addr : rounded;
  }
}

