// What a snapshot's final state holds, from its segments as recorded: the report PyTorch's
// `python -m torch.cuda._memory_viz stats` prints (segsum: one line per segment of 20 MiB or more,
// its pages drawn as characters, then the totals), re-implemented to print the same text; and the
// segments grouped by pool and stream, and the free blocks by size, which it does not print.
import type { Snapshot, SnapshotSegment } from '../snapshot/snapshot';
import { byCodePoint } from '../../lib/by-code-point';

const PAGE = 20 * 2 ** 20;

/** Python's "%.1f": as toFixed(1), but an exact tie rounds to the even digit (1.25 -> "1.2", where toFixed gives "1.3"). */
export function pyFixed1(x: number): string {
  const exact = Math.abs(x).toFixed(30);
  const dot = exact.indexOf('.');
  if (exact[dot + 2] === '5' && /^0*$/.test(exact.slice(dot + 3))) {
    const down = Math.floor(Math.abs(x) * 10);
    const tenths = down % 2 === 0 ? down : down + 1;
    return `${x < 0 ? '-' : ''}${(tenths / 10).toFixed(1)}`;
  }
  return x.toFixed(1);
}

/** _memory_viz's _format_size: "%3.1f" of the value in the largest binary unit under 1024. */
export function pyFormatSize(bytes: number): string {
  let n = bytes;
  for (const unit of ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'Zi']) {
    if (Math.abs(n) < 1024) return `${pyFixed1(n).padStart(3)}${unit}B`;
    n /= 1024;
  }
  return `${pyFixed1(n)}YiB`;
}

function reportFree(external: number, internal: number): string {
  const total = external + internal;
  return `${pyFormatSize(total)}${total !== 0 ? ` (${pyFixed1((internal / total) * 100)}% internal)` : ''}`;
}

const active = (s: SnapshotSegment): number => s.blocks.reduce((a, b) => a + (b.state === 'active_allocated' ? b.size : 0), 0);

/** One segment's pages: a-z a page of one allocation's bytes, ' ' free, 0-9 tenths full of several, * full of several. */
function pages(s: SnapshotSegment): string {
  const n = Math.floor((s.total_size - 1) / PAGE) + 1;
  const occupied: string[] = new Array<string>(n).fill(' ');
  const frac = new Float64Array(n);
  let offset = 0;
  let k = 0;
  for (const b of s.blocks) {
    if (b.state === 'active_allocated') {
      const start = offset;
      const finish = offset + b.requested_size;
      const mark = String.fromCharCode(97 + (k++ % 26));
      for (let j = Math.floor(start / PAGE); j < Math.floor((finish - 1) / PAGE) + 1; j++) {
        frac[j]! += (Math.min(finish, (j + 1) * PAGE) - Math.max(start, j * PAGE)) / PAGE;
        occupied[j] = occupied[j] !== ' ' ? '0123456789*'[Math.floor(frac[j]! * 10)]! : mark;
      }
    }
    offset += b.size;
  }
  return occupied.join('');
}

/** The text `python -m torch.cuda._memory_viz stats` prints for `snapshot`. */
export function segmentSummary(snapshot: Snapshot): string {
  const out: string[] = [`Summary of segments >= ${pyFormatSize(PAGE)} in size`];
  let reserved = 0;
  let allocated = 0;
  let external = 0;
  let internal = 0;
  const sorted = snapshot.segments
    .map((s, i) => ({ s, i, active: active(s) }))
    .sort((a, b) => a.s.total_size - b.s.total_size || a.active - b.active || a.i - b.i);
  for (const { s } of sorted) {
    reserved += s.total_size;
    let segExternal = 0;
    let segInternal = 0;
    for (const b of s.blocks) {
      if (b.state === 'active_allocated') {
        allocated += b.requested_size;
        segInternal += b.size - b.requested_size;
      } else segExternal += b.size;
    }
    external += segExternal;
    internal += segInternal;
    if (s.total_size >= PAGE) {
      out.push(`[${pages(s)}] ${pyFormatSize(s.total_size)} allocated, ${reportFree(segExternal, segInternal)} free${s.stream !== 0 ? ` stream_${s.stream}` : ''}`);
    }
  }
  out.push(`segments: ${snapshot.segments.length}`, `total_reserved: ${pyFormatSize(reserved)}`, `total_allocated: ${pyFormatSize(allocated)}`, `total_free: ${reportFree(external, internal)}`);
  out.push(
    '',
    'Legend:',
    '    [a     ] - a segment in the allocator',
    `     ^-- a page ${pyFormatSize(PAGE)} of memory in the segment`,
    "    a-z: pages filled with a single block's content",
    "    ' ': page is completely free",
    '    *: page if completely full with multiple blocks',
    '    0-9: page is partially full with tensors of multiple blocks (9 == 90% full)',
    '    (X% internal) - of the free memory, X% is free because we rounded the size of the allocation.',
    '',
  );
  return out.join('\n');
}

export interface PoolStreamRow {
  device: number;
  /** 'default' or the private pool's id as PyTorch writes it, "(0, 1)". */
  pool: string;
  stream: number;
  small: boolean;
  segments: number;
  reserved: number;
  allocated: number;
  /** Blocks freed by the program that another stream still uses (record_stream). */
  pendingFree: number;
  freeBlocks: number;
  freeBytes: number;
  largestFree: number;
}

/** The recorded segments by device, pool, stream and pool size. */
export function segmentsByPool(snapshot: Snapshot): PoolStreamRow[] {
  const rows = new Map<string, PoolStreamRow>();
  for (const s of snapshot.segments) {
    const id = s.segment_pool_id;
    const pool = !id || (id[0] === 0 && id[1] === 0) ? 'default' : `(${id[0]}, ${id[1]})`;
    const small = s.segment_type === 'small';
    const key = `${s.device ?? 0}/${pool}/${s.stream}/${small}`;
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { device: s.device ?? 0, pool, stream: s.stream, small, segments: 0, reserved: 0, allocated: 0, pendingFree: 0, freeBlocks: 0, freeBytes: 0, largestFree: 0 }));
    r.segments++;
    r.reserved += s.total_size;
    for (const b of s.blocks) {
      if (b.state === 'active_allocated') r.allocated += b.size;
      else if (b.state === 'active_pending_free') r.pendingFree += b.size;
      else {
        r.freeBlocks++;
        r.freeBytes += b.size;
        r.largestFree = Math.max(r.largestFree, b.size);
      }
    }
  }
  return [...rows.values()].sort((a, b) => a.device - b.device || Number(a.pool !== 'default') - Number(b.pool !== 'default') || byCodePoint(a.pool, b.pool) || a.stream - b.stream || Number(a.small) - Number(b.small));
}

/** Free blocks by size class: what a request of each size could find cached. */
const FREE_CLASSES: [string, number, number][] = [
  ['under 1 MiB (small pool sizes)', 0, 2 ** 20],
  ['1 MiB to 20 MiB', 2 ** 20, 20 * 2 ** 20],
  ['20 MiB to 1 GiB', 20 * 2 ** 20, 2 ** 30],
  ['1 GiB and up', 2 ** 30, Infinity],
];

export function freeBlocksBySize(snapshot: Snapshot): { label: string; blocks: number; bytes: number }[] {
  const out = FREE_CLASSES.map(([label]) => ({ label, blocks: 0, bytes: 0 }));
  for (const s of snapshot.segments) {
    for (const b of s.blocks) {
      if (b.state !== 'inactive') continue;
      const k = FREE_CLASSES.findIndex(([, lo, hi]) => b.size >= lo && b.size < hi);
      out[k]!.blocks++;
      out[k]!.bytes += b.size;
    }
  }
  return out;
}
