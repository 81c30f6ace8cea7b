// The search box's queries: an address (hex, or a decimal past 4 GiB), a size range, or text of a
// stack frame; and the requests each one matches. An address matches the recorded entries whose
// range holds it (the recording's addresses); a size, the allocs that asked for that many bytes (the
// requested size, on the map as in the list: a block can be larger, rounded up or holding the rest of
// its segment, and is marked by its request's size); text, the allocs whose stack has a frame
// containing it. The segment map marks its blocks at the cursor.
import { RequestKind, type RequestStream } from '../stream/request-stream';
import type { TraceColumns } from '../snapshot/trace-columns';
import { Action } from '../../allocator/trace-action';
import { matchStacks, type AllocationStacks } from './allocation-stacks';
import { frameLabel } from './frame-filter';

export type SearchQuery =
  | { kind: 'address'; address: number }
  | { kind: 'size'; min: number; max: number }
  | { kind: 'text'; text: string };

const UNITS: Record<string, number> = { '': 1, b: 1, k: 2 ** 10, kb: 2 ** 10, kib: 2 ** 10, m: 2 ** 20, mb: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gb: 2 ** 30, gib: 2 ** 30, t: 2 ** 40, tb: 2 ** 40, tib: 2 ** 40 };
const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i;

/** Bytes a size like "512", "1.5 GiB" or "20MB" stands for (KB, MB, GB are binary, as PyTorch prints them); null if not one. */
function bytesOf(text: string, unitRequired: boolean): number | null {
  const m = SIZE.exec(text);
  if (!m) return null;
  const unit = UNITS[m[2]!.toLowerCase()];
  if (unit === undefined || (unitRequired && m[2] === '')) return null;
  return Math.round(Number(m[1]) * unit);
}

/** What a query asks for, or null for an empty one. */
export function parseSearch(input: string): SearchQuery | null {
  const q = input.trim();
  if (q === '') return null;
  if (/^0x[0-9a-f]+$/i.test(q)) return { kind: 'address', address: Number.parseInt(q.slice(2), 16) };
  // A bare decimal past 4 GiB is an address: CUDA's are near 2^47, no request is that large.
  if (/^\d+$/.test(q) && Number(q) >= 2 ** 32) return { kind: 'address', address: Number(q) };
  const range = /^(.+?)\s*(?:\.\.|–|-)\s*(.+)$/.exec(q);
  if (range) {
    const min = bytesOf(range[1]!, false);
    const max = bytesOf(range[2]!, false);
    if (min !== null && max !== null) return { kind: 'size', min: Math.min(min, max), max: Math.max(min, max) };
  }
  const bound = /^(>=|<=|>|<)\s*(.+)$/.exec(q);
  if (bound) {
    const n = bytesOf(bound[2]!, false);
    if (n !== null) {
      const op = bound[1]!;
      return op === '>' ? { kind: 'size', min: n + 1, max: Infinity } : op === '>=' ? { kind: 'size', min: n, max: Infinity } : op === '<' ? { kind: 'size', min: 0, max: n - 1 } : { kind: 'size', min: 0, max: n };
    }
  }
  const exact = bytesOf(q, true);
  if (exact !== null) return { kind: 'size', min: exact, max: exact };
  return { kind: 'text', text: q.toLowerCase() };
}

export interface SearchMatches {
  /** The requests matched, ascending. */
  requests: Int32Array;
  /** For a text query: every logical id whose stack matches (the map marks those live at the cursor). */
  ids: Int32Array | null;
}

/** The requests `query` matches in `stream` (made from `trace`, whose addresses an address query reads). */
export function searchRequests(query: SearchQuery, stream: RequestStream, trace: TraceColumns | undefined, stacks: AllocationStacks, requestOf: Int32Array): SearchMatches {
  const out: number[] = [];
  if (query.kind === 'address') {
    if (trace) {
      const a = query.address;
      let last = -2;
      for (let e = 0; e < trace.length; e++) {
        if (trace.action[e] === Action.oom) continue;
        const start = trace.addr[e]!;
        if (a < start || a >= start + Math.max(1, trace.size[e]!)) continue;
        // The entry's own request, or (a segment event) the one it precedes.
        const r = stream.source[requestOf[e]!] === e ? requestOf[e]! : requestOf[e]! + 1;
        if (r !== last && r >= 0 && r < stream.length) out.push((last = r));
      }
    }
    return { requests: Int32Array.from(out), ids: null };
  }
  if (query.kind === 'size') {
    for (let i = 0; i < stream.length; i++) {
      if (stream.kind[i] !== RequestKind.alloc) continue;
      const s = stream.size[i]!;
      if (s >= query.min && s <= query.max) out.push(i);
    }
    return { requests: Int32Array.from(out), ids: null };
  }
  const matches = matchStacks(stacks, (stack) => typeof stack !== 'string' && stack.some((f) => frameLabel(f).toLowerCase().includes(query.text)));
  const ids: number[] = [];
  for (let id = 0; id < stream.idCount; id++) if (matches(id)) ids.push(id);
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && matches(stream.id[i]!)) out.push(i);
  return { requests: Int32Array.from(out), ids: Int32Array.from(ids) };
}

/** Whether a block (at `addr`, of `size` bytes, allocated to `id` or -1, for a request of `requested`
 * bytes) matches, at the cursor: by the size its request asked for, as the requests match. */
export function blockMatches(query: SearchQuery, addr: number, size: number, requested: number, id: number, ids: ReadonlySet<number> | null): boolean {
  if (query.kind === 'address') return query.address >= addr && query.address < addr + size;
  if (query.kind === 'size') return id >= 0 && requested >= query.min && requested <= query.max;
  return id >= 0 && (ids?.has(id) ?? false);
}
