// A parsed pickle or JSON value checked against the Snapshot shape, in place, with messages that
// name the field and what was wrong. Hand-written loops rather than a schema library: a snapshot can
// hold a million trace entries, and checking them must cost a small fraction of the parse.
import { ACTION_NAMES, actionCode } from '../../allocator/trace-action';
import { ImportError } from '../../lib/import-error';
import { FastPathUnusable } from '../pickle/pickle-fast-path';
import { UNKNOWN_LINE, type AllocatorSettings, type SnapshotBlockState, type Snapshot, type SnapshotSegment, type TraceEntry } from './snapshot';
import { sliceColumns, TraceColumnsBuilder, type TraceColumns } from './trace-columns';
import type { RowRun, TraceRows } from './trace-rows';
import { grouped } from '../../lib/grouped';
import { MAX_RECORDABLE_BYTES } from './snapshot';

export const NOT_A_SNAPSHOT =
  'This is not a PyTorch memory snapshot: expected a pickle from ' +
  'torch.cuda.memory._dump_snapshot, gzip-compressed or not, or the same structure as JSON.';

/** A snapshot with its device traces as columns, all a replay reads. */
export interface SnapshotForReplay {
  /** device_traces may be left as empty lists: `traces` holds them. */
  snapshot: Snapshot;
  /** One per device, as device_traces. */
  traces: TraceColumns[];
}

/** What the checks let through with a note: actions of a newer PyTorch, unknown line numbers. */
interface CheckNotes {
  /** Entries skipped, by action name. */
  skipped: Map<string, number>;
  unknownLines: number;
}
const BLOCK_STATES: ReadonlySet<string> = new Set<SnapshotBlockState>([
  'active_allocated', 'active_pending_free', 'inactive',
]);
const SMALL_SEGMENT = 2 * 1024 * 1024;

type Dict = Record<string, unknown>;

function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing (the key is missing)';
  if (v === null) return 'None';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)}`;
  if (typeof v === 'number') return Number.isFinite(v) ? `number ${v}` : `${v}`;
  if (typeof v === 'bigint') return `integer ${v}`;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (v instanceof Uint8Array) return 'bytes';
  return 'a dict';
}

function bad(path: string, expected: string, got: unknown): never {
  if (typeof got === 'bigint' && expected.includes('integer')) {
    throw new ImportError(
      'bad-shape',
      `Not a valid memory snapshot: ${path} is ${got}, beyond 2^53; splitscope does not support ` +
        `addresses or sizes that large (real CUDA addresses fit).`,
    );
  }
  throw new ImportError(
    'bad-shape',
    `Not a valid memory snapshot: ${path} should be ${expected}, got ${describe(got)}. ` +
      `Open a file written by torch.cuda.memory._dump_snapshot, or fix that field.`,
  );
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** A Python int of any size, read as the nearest number: for fields whose exact value does not matter
 * (stream handles, times, pool ids, device_free); only addresses and sizes must be exact. */
function isLooseInt(v: unknown): v is number | bigint {
  return isInt(v) || typeof v === 'bigint';
}

/** A loose integer field as a number (see isLooseInt), or `fallback` when it is missing. */
function looseIntField(o: Dict, key: string, path: () => string, fallback?: number): number {
  const v = o[key];
  if (isInt(v)) return v;
  if (typeof v === 'bigint') return (o[key] = Number(v)) as number;
  if (v === undefined && fallback !== undefined) return (o[key] = fallback);
  return bad(`${path()}.${key}`, 'an integer', v);
}

/** A byte count (an address or a size): an exact integer, 0 or more. */
function bytesField(o: Dict, key: string, path: () => string, fallback?: number): number {
  const v = intField(o, key, path, fallback);
  if (v < 0) bad(`${path()}.${key}`, 'an address or size of 0 or more', v);
  if (key !== 'address' && v > MAX_RECORDABLE_BYTES) bad(`${path()}.${key}`, RECORDABLE, v);
  return v;
}

/** What a size past MAX_RECORDABLE_BYTES should have been. */
const RECORDABLE = `a size a GPU can hold (at most ${MAX_RECORDABLE_BYTES / 2 ** 40} TiB)`;

/** An integer field, or `fallback` when it is missing and a fallback is allowed. */
function intField(o: Dict, key: string, path: () => string, fallback?: number): number {
  const v = o[key];
  if (isInt(v)) return v;
  if (v === undefined && fallback !== undefined) {
    o[key] = fallback;
    return fallback;
  }
  return bad(`${path()}.${key}`, 'an integer', v);
}

/**
 * Checks a frame list (extra keys, as FX frames have, are kept and not read); `path` is only called
 * to word an error. A line past 2^53 is PyTorch's "unknown" and becomes UNKNOWN_LINE.
 */
function checkFrames(v: unknown, path: () => string, notes: CheckNotes): void {
  if (!Array.isArray(v)) bad(path(), 'a list of frames', v);
  for (let i = 0; i < v.length; i++) {
    const f = v[i] as Dict;
    if (!isDict(f)) bad(`${path()}[${i}]`, 'a frame dict', f);
    if (typeof f.name !== 'string') bad(`${path()}[${i}].name`, 'a string', f.name);
    if (typeof f.filename !== 'string') bad(`${path()}[${i}].filename`, 'a string', f.filename);
    const line = f.line;
    if (!isInt(line) || line > Number.MAX_SAFE_INTEGER) {
      if (!isLooseInt(line)) bad(`${path()}[${i}].line`, 'an integer', line);
      f.line = UNKNOWN_LINE;
      notes.unknownLines++;
    }
  }
}

// The per-entry checks make no closures or strings unless something is wrong: they run
// once per trace entry, up to millions of times.
function checkTrace(list: unknown, d: number, seen: Set<unknown>, notes: CheckNotes): TraceEntry[] {
  if (!Array.isArray(list)) bad(`device_traces[${d}]`, 'a list of trace entries', list);
  let lastFrames: unknown;
  let skipped = 0;
  for (let i = 0; i < list.length; i++) {
    const frames = checkTraceEntry(list[i], d, i, seen, lastFrames, notes);
    if (frames === SKIP) skipped++;
    else lastFrames = frames;
  }
  return (skipped > 0 ? list.filter((e) => actionCode((e as Dict).action) >= 0) : list) as TraceEntry[];
}

/**
 * A device trace as columns: its dict entries, checked here, with the runs of rows the reader
 * recorded for this list put in their places (see TraceRows).
 */
function traceColumnsOf(list: unknown, d: number, seen: Set<unknown>, rows: RowCursor, notes: CheckNotes): TraceColumns {
  if (!Array.isArray(list)) bad(`device_traces[${d}]`, 'a list of trace entries', list);
  const { runs, columns: from } = rows;
  let k = rows.nextRun;
  // Runs come in reading order: this list's must be next (a list that appears twice has none left).
  if (rows.lists.has(list) && runs[k]?.list !== list) throw new FastPathUnusable();
  const mine = (at: number): boolean => k < runs.length && runs[k]!.list === list && runs[k]!.at === at;
  if (list.length === 0 && mine(0) && !(k + 1 < runs.length && runs[k + 1]!.list === list)) {
    // The usual case: one run, no dicts: the rows as they are, no copy.
    const start = rows.next;
    rows.next += runs[k]!.count;
    rows.nextRun = k + 1;
    return sliceColumns(from, start, rows.next);
  }
  let rowCount = 0;
  for (let j = k; j < runs.length && runs[j]!.list === list; j++) rowCount += runs[j]!.count;
  const out = new TraceColumnsBuilder(list.length + rowCount, from.details !== undefined);
  const takeRuns = (at: number): void => {
    for (; mine(at); k++) {
      out.pushRows(from, rows.next, runs[k]!.count);
      rows.next += runs[k]!.count;
    }
  };
  let lastFrames: unknown;
  for (let i = 0; i < list.length; i++) {
    takeRuns(i);
    const e = list[i];
    const frames = checkTraceEntry(e, d, i, seen, lastFrames, notes);
    if (frames === SKIP) continue;
    lastFrames = frames;
    out.pushEntry(e as TraceEntry);
  }
  takeRuns(list.length);
  rows.nextRun = k;
  return out;
}

interface RowCursor {
  columns: TraceColumns;
  runs: readonly RowRun[];
  /** The lists that received runs. */
  lists: ReadonlySet<unknown>;
  /** The next row and run to take. */
  next: number;
  nextRun: number;
}

/** checkTraceEntry's answer for an entry of an action this splitscope does not know: leave it out. */
const SKIP = Symbol('skip');

/**
 * Checks one entry in place; returns its frame list (a repeat of the last one is not checked again),
 * or SKIP for an action of a newer PyTorch (a string this version does not know), which a replay
 * can do without.
 */
function checkTraceEntry(entry: unknown, d: number, i: number, seen: Set<unknown>, lastFrames: unknown, notes: CheckNotes): unknown {
  const at = (i: number, key: string): string => `device_traces[${d}][${i}]${key}`;
  const e = entry as Dict;
  if (!isDict(e)) bad(at(i, ''), 'a trace entry dict', e);
  const action = e.action;
  if (actionCode(action) < 0) {
    if (typeof action !== 'string') bad(at(i, '.action'), `one of ${ACTION_NAMES.join(', ')}`, action);
    notes.skipped.set(action, (notes.skipped.get(action) ?? 0) + 1);
    return SKIP;
  }
  if (!isInt(e.addr)) {
    // PyTorch writes device_free instead of addr on an oom.
    if (action === 'oom' && e.addr === undefined) e.addr = 0;
    else bad(at(i, '.addr'), 'an integer', e.addr);
  }
  if (!isInt(e.size)) bad(at(i, '.size'), 'an integer', e.size);
  if ((e.addr as number) < 0 || (e.size as number) < 0) {
    bad(at(i, (e.size as number) < 0 ? '.size' : '.addr'), 'an address or size of 0 or more', (e.size as number) < 0 ? e.size : e.addr);
  }
  // PyTorch could never have recorded it: replayed, it would only cost time and memory before failing.
  // An oom is the exception: a request of any size is recorded as one (torch.empty(2**52) asks, and fails).
  if ((e.size as number) > MAX_RECORDABLE_BYTES && action !== 'oom') bad(at(i, '.size'), RECORDABLE, e.size);
  if (!isInt(e.stream)) {
    if (e.stream === undefined) e.stream = 0;
    else looseIntField(e, 'stream', () => at(i, ''));
  }
  const t = e.time_us;
  if (t !== undefined && typeof t !== 'number') {
    if (typeof t === 'bigint') e.time_us = Number(t);
    else bad(at(i, '.time_us'), 'a number', t);
  }
  if (e.device_free !== undefined && !isInt(e.device_free)) looseIntField(e, 'device_free', () => at(i, ''));
  const frames = e.frames;
  if (frames !== undefined && frames !== lastFrames) {
    // Entries share frame lists. A short list is cheaper to check again than to look up;
    // a long one is checked once, so shared lists cannot multiply the work.
    if (!Array.isArray(frames) || frames.length <= 32) checkFrames(frames, () => at(i, '.frames'), notes);
    else if (!seen.has(frames)) {
      checkFrames(frames, () => at(i, '.frames'), notes);
      seen.add(frames);
    }
  }
  if (e.compile_context !== undefined && typeof e.compile_context !== 'string') {
    bad(at(i, '.compile_context'), 'a string', e.compile_context);
  }
  // user_metadata is whatever the program set (_set_memory_metadata): shown as text.
  if (e.user_metadata !== undefined && typeof e.user_metadata !== 'string') e.user_metadata = String(e.user_metadata);
  if (e.pool_id !== undefined) e.pool_id = poolIdField(e.pool_id, () => at(i, '.pool_id'));
  return frames ?? lastFrames;
}

/** A pool id, (0, 0) or a private pool's (a tuple, read as a list): a pair of integers of any size. */
function poolIdField(pool: unknown, path: () => string): [number, number] {
  if (!(Array.isArray(pool) && pool.length === 2 && isLooseInt(pool[0]) && isLooseInt(pool[1]))) {
    bad(path(), 'a pair of integers', pool);
  }
  return [Number(pool[0]), Number(pool[1])];
}

function checkSegment(s: unknown, i: number, notes: CheckNotes): SnapshotSegment {
  const path = (): string => `segments[${i}]`;
  if (!isDict(s)) bad(path(), 'a segment dict', s);
  const address = bytesField(s, 'address', path);
  const total = bytesField(s, 'total_size', path);
  if (total === 0) bad(`${path()}.total_size`, 'a size above 0', total);
  looseIntField(s, 'device', path, 0);
  looseIntField(s, 'stream', path, 0);
  const blocks = s.blocks;
  if (!Array.isArray(blocks)) bad(`${path()}.blocks`, 'a list of blocks', blocks);
  // Older PyTorch versions leave out some block and segment fields; fill them the way
  // memory_viz does (block addresses run on from the segment's address).
  let next = address;
  let allocated = 0;
  let active = 0;
  let requested = 0;
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j] as Dict;
    const bpath = (): string => `${path()}.blocks[${j}]`;
    if (!isDict(b)) bad(bpath(), 'a block dict', b);
    const size = bytesField(b, 'size', bpath);
    const at = bytesField(b, 'address', bpath, next);
    const req = bytesField(b, 'requested_size', bpath, size);
    if (at !== next) {
      throw new ImportError(
        'bad-shape',
        `Not a consistent memory snapshot: ${bpath()} starts at ${at}, but the blocks before it in ${path()} end at ${next}: ` +
          "a segment's blocks tile it, one after another.",
      );
    }
    const state = b.state;
    if (typeof state !== 'string' || !BLOCK_STATES.has(state)) {
      bad(`${bpath()}.state`, `one of ${[...BLOCK_STATES].join(', ')}`, state);
    }
    if (b.frames !== undefined) checkFrames(b.frames, () => `${bpath()}.frames`, notes);
    if (state !== 'inactive') active += size;
    if (state === 'active_allocated') {
      allocated += size;
      requested += req;
    }
    next = at + size;
  }
  if (next - address !== total && blocks.length > 0) {
    throw new ImportError(
      'bad-shape',
      `Not a consistent memory snapshot: the blocks of ${path()} (at ${address}) add up to ${next - address} bytes, ` +
        `but the segment is ${total} bytes: a segment's blocks tile it exactly.`,
    );
  }
  intField(s, 'allocated_size', path, allocated);
  intField(s, 'active_size', path, active);
  intField(s, 'requested_size', path, requested);
  const type = s.segment_type;
  if (type === undefined) s.segment_type = total === SMALL_SEGMENT ? 'small' : 'large';
  else if (type !== 'large' && type !== 'small') bad(`${path()}.segment_type`, "'large' or 'small'", type);
  if (s.segment_pool_id !== undefined) s.segment_pool_id = poolIdField(s.segment_pool_id, () => `${path()}.segment_pool_id`);
  const expandable = s.is_expandable;
  if (expandable === undefined) s.is_expandable = false;
  else if (typeof expandable !== 'boolean') bad(`${path()}.is_expandable`, 'True or False', expandable);
  if (s.frames !== undefined) checkFrames(s.frames, () => `${path()}.frames`, notes);
  return s as unknown as SnapshotSegment;
}

function checkSettings(v: unknown): AllocatorSettings {
  if (!isDict(v)) bad('allocator_settings', 'a dict', v);
  const num = (k: string): void => {
    if (v[k] !== undefined && typeof v[k] !== 'number') bad(`allocator_settings.${k}`, 'a number', v[k]);
  };
  num('max_split_size');
  num('garbage_collection_threshold');
  if (v.expandable_segments !== undefined && typeof v.expandable_segments !== 'boolean') {
    bad('allocator_settings.expandable_segments', 'True or False', v.expandable_segments);
  }
  if (v.PYTORCH_CUDA_ALLOC_CONF !== undefined && typeof v.PYTORCH_CUDA_ALLOC_CONF !== 'string') {
    bad('allocator_settings.PYTORCH_CUDA_ALLOC_CONF', 'a string', v.PYTORCH_CUDA_ALLOC_CONF);
  }
  const r = v.roundup_power2_divisions;
  if (r !== undefined) {
    if (!isDict(r)) bad('allocator_settings.roundup_power2_divisions', 'a dict', r);
    for (const k in r) if (!isInt(r[k])) bad(`allocator_settings.roundup_power2_divisions[${k}]`, 'an integer', r[k]);
  }
  return v as AllocatorSettings;
}

/**
 * Checks a parsed pickle or JSON value against the Snapshot shape, in place: fields older
 * PyTorch versions omit are filled in, and an 'oom' entry gets addr 0. A top-level list is
 * read as the segment list that torch.cuda.memory_snapshot() returns.
 */
export function toSnapshot(raw: unknown): Snapshot {
  return checkSnapshot(raw, undefined).snapshot;
}

/** toSnapshot, and with `rows` the device traces as columns (device_traces then left empty). */
export function checkSnapshot(raw: unknown, rows: TraceRows | undefined): SnapshotForReplay {
  let top: Dict;
  if (Array.isArray(raw)) top = { segments: raw, device_traces: [] };
  else if (isDict(raw) && Array.isArray(raw.segments)) top = raw;
  else if (isDict(raw)) {
    const keys = Object.keys(raw).slice(0, 8).map((k) => `'${k}'`).join(', ');
    throw new ImportError(
      'not-a-snapshot',
      `${NOT_A_SNAPSHOT} This file holds a dict with ${keys ? `keys ${keys}` : 'no keys'} but no ` +
        `'segments' list.`,
    );
  } else {
    throw new ImportError('not-a-snapshot', `${NOT_A_SNAPSHOT} This file holds ${describe(raw)}.`);
  }

  const seen = new Set<unknown>();
  const notes: CheckNotes = { skipped: new Map(), unknownLines: 0 };
  const segmentsIn = top.segments as unknown[];
  const segments: SnapshotSegment[] = [];
  for (let i = 0; i < segmentsIn.length; i++) segments.push(checkSegment(segmentsIn[i], i, notes));
  checkSegmentsApart(segments);

  const tracesIn = top.device_traces;
  const device_traces: TraceEntry[][] = [];
  const traces: TraceColumns[] = [];
  if (tracesIn !== undefined && tracesIn !== null) {
    if (!Array.isArray(tracesIn)) bad('device_traces', 'a list with one list per device', tracesIn);
    if (rows) {
      const lists = new Set(rows.runs.map((r) => r.list));
      const cursor: RowCursor = { columns: rows.columns, runs: rows.runs, lists, next: 0, nextRun: 0 };
      for (let d = 0; d < tracesIn.length; d++) {
        traces.push(traceColumnsOf(tracesIn[d], d, seen, cursor, notes));
        device_traces.push([]);
      }
      // Every row went into a device trace, and nowhere else.
      if (cursor.next !== rows.columns.length || cursor.nextRun !== rows.runs.length) throw new FastPathUnusable();
    } else {
      for (let d = 0; d < tracesIn.length; d++) device_traces.push(checkTrace(tracesIn[d], d, seen, notes));
    }
  }
  if (rows && rows.columns.length > 0 && traces.length === 0) throw new FastPathUnusable();
  if (rows) notes.unknownLines += rows.unknownLines;

  const snapshot: Snapshot = { segments, device_traces };
  const said = notesOf(notes);
  if (said.length > 0) snapshot.notes = said;
  if (top.allocator_settings !== undefined && top.allocator_settings !== null) {
    snapshot.allocator_settings = checkSettings(top.allocator_settings);
  }
  const ann = top.external_annotations;
  if (ann !== undefined && ann !== null) {
    if (!Array.isArray(ann)) bad('external_annotations', 'a list', ann);
    snapshot.external_annotations = ann;
  }
  return { snapshot, traces };
}

/** Two segments of one device that share an address range are not a snapshot PyTorch could write. */
function checkSegmentsApart(segments: readonly SnapshotSegment[]): void {
  const order = segments.map((_, i) => i).sort((a, b) => segments[a]!.device - segments[b]!.device || segments[a]!.address - segments[b]!.address);
  for (let k = 1; k < order.length; k++) {
    const a = segments[order[k - 1]!]!;
    const b = segments[order[k]!]!;
    if (a.device === b.device && b.address < a.address + a.total_size) {
      throw new ImportError(
        'bad-shape',
        `Not a consistent memory snapshot: segments[${order[k - 1]}] (at ${a.address}, ${a.total_size} bytes) and ` +
          `segments[${order[k]}] (at ${b.address}) overlap${a.address === b.address ? ': the same segment is listed twice' : ''}.`,
      );
    }
  }
}

function notesOf(notes: CheckNotes): string[] {
  const out: string[] = [];
  if (notes.skipped.size > 0) {
    const list = [...notes.skipped].map(([action, n]) => `${grouped(n)} '${action}'`).join(', ');
    out.push(`The trace has entries of actions this splitscope does not know (${list}), probably from a newer PyTorch: they were left out; the allocator's own events are all there.`);
  }
  if (notes.unknownLines > 0) {
    const one = notes.unknownLines === 1;
    out.push(
      `${grouped(notes.unknownLines)} stack ${one ? 'frame has' : 'frames have'} no line number (PyTorch writes 2^64 - 1 for frames it ` +
        `cannot place, as in torch.compile's generated code): ${one ? 'it shows' : 'they show'} as "line unknown".`,
    );
  }
  return out;
}
