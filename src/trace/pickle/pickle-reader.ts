// A data-only unpickler (protocols 0..5). torch.cuda.memory._dump_snapshot writes a plain
// pickle of dicts, lists, strings and numbers; a pickle can also name and call any Python
// callable, so every opcode that would import or call code (GLOBAL, REDUCE, BUILD, ...) is
// refused rather than emulated. The rest is one switch in one loop over the bytes: snapshots
// run to hundreds of MB with tens of millions of opcodes, so the hot opcodes avoid per-op
// allocation and repeated short strings ('alloc', file names) are decoded once and shared.

import { ImportError } from '../../lib/import-error';
import { decodeLong, normalizeBig } from './pickle-ints';
import { PickleMemo } from './pickle-memo';
import { StringCache } from './pickle-string-cache';
import { FastPathUnusable, isStandIn, ROW_STAND_IN, type PickleFastPath } from './pickle-fast-path';
import type { PickleDict, PickleValue } from './pickle-value';
import {
  ADDITEMS,
  APPEND,
  APPENDS,
  BINBYTES,
  BINBYTES8,
  BINFLOAT,
  BINGET,
  BININT,
  BININT1,
  BININT2,
  BINPERSID,
  BINPUT,
  BINSTRING,
  BINUNICODE,
  BINUNICODE8,
  BUILD,
  BYTEARRAY8,
  DICT,
  DUP,
  EMPTY_DICT,
  EMPTY_LIST,
  EMPTY_SET,
  EMPTY_TUPLE,
  EXT1,
  EXT2,
  EXT4,
  FLOAT,
  FRAME,
  FROZENSET,
  GET,
  GLOBAL,
  INST,
  INT,
  LIST,
  LONG,
  LONG1,
  LONG4,
  LONG_BINGET,
  LONG_BINPUT,
  MARK,
  MEMOIZE,
  NEWFALSE,
  NEWOBJ,
  NEWOBJ_EX,
  NEWTRUE,
  NEXT_BUFFER,
  NONE,
  OBJ,
  PERSID,
  POP,
  POP_MARK,
  PROTO,
  PUT,
  READONLY_BUFFER,
  REDUCE,
  SETITEM,
  SETITEMS,
  SHORT_BINBYTES,
  SHORT_BINSTRING,
  SHORT_BINUNICODE,
  STACK_GLOBAL,
  STOP,
  STRING,
  TUPLE,
  TUPLE1,
  TUPLE2,
  TUPLE3,
  UNICODE,
} from './pickle-opcodes';

export type { PickleDict, PickleValue } from './pickle-value';

export interface ReadPickleOptions {
  /** Called with the fraction of input read, about every 4 MB and once at the end. */
  onProgress?: (fraction: number) => void;
  /** Deepest MARK nesting allowed (default 10000); stops hostile input from nesting forever. */
  maxDepth?: number;
  /**
   * Read some dicts another way (see pickle-fast-path.ts): each one becomes ROW_STAND_IN in the
   * result. Throws FastPathUnusable when the file uses one in a way the fast path cannot vouch for.
   */
  fastPath?: PickleFastPath;
  /** Strings to decode to these very values, so that comparing them is a pointer test (dict keys). */
  intern?: readonly string[];
  /** Bytes a window must hold past where reading goes on (default WINDOW_MARGIN; tests make it small). */
  windowMargin?: number;
}

const PROGRESS_STEP = 4 << 20;
const DEFAULT_MAX_DEPTH = 10_000;
/** CPython refuses int() on more digits than this (sys.int_info.default_max_str_digits). */
const MAX_TEXT_DIGITS = 4300;
/** LONG4's bytes for as many digits: 4300 * log2(10) / 8, rounded up. */
const MAX_LONG_BYTES = 1786;

// Opcode names, for error messages.

const OPCODE_NAMES: Record<number, string> = {
  [MARK]: 'MARK', [STOP]: 'STOP', [POP]: 'POP', [POP_MARK]: 'POP_MARK', [DUP]: 'DUP',
  [FLOAT]: 'FLOAT', [INT]: 'INT', [BININT]: 'BININT', [BININT1]: 'BININT1', [LONG]: 'LONG',
  [BININT2]: 'BININT2', [NONE]: 'NONE', [PERSID]: 'PERSID', [BINPERSID]: 'BINPERSID',
  [REDUCE]: 'REDUCE', [STRING]: 'STRING', [BINSTRING]: 'BINSTRING',
  [SHORT_BINSTRING]: 'SHORT_BINSTRING', [UNICODE]: 'UNICODE', [BINUNICODE]: 'BINUNICODE',
  [APPEND]: 'APPEND', [BUILD]: 'BUILD', [GLOBAL]: 'GLOBAL', [DICT]: 'DICT',
  [EMPTY_DICT]: 'EMPTY_DICT', [APPENDS]: 'APPENDS', [GET]: 'GET', [BINGET]: 'BINGET',
  [INST]: 'INST', [LONG_BINGET]: 'LONG_BINGET', [LIST]: 'LIST', [EMPTY_LIST]: 'EMPTY_LIST',
  [OBJ]: 'OBJ', [PUT]: 'PUT', [BINPUT]: 'BINPUT', [LONG_BINPUT]: 'LONG_BINPUT',
  [SETITEM]: 'SETITEM', [TUPLE]: 'TUPLE', [EMPTY_TUPLE]: 'EMPTY_TUPLE', [SETITEMS]: 'SETITEMS',
  [BINFLOAT]: 'BINFLOAT', [PROTO]: 'PROTO', [NEWOBJ]: 'NEWOBJ', [EXT1]: 'EXT1', [EXT2]: 'EXT2',
  [EXT4]: 'EXT4', [TUPLE1]: 'TUPLE1', [TUPLE2]: 'TUPLE2', [TUPLE3]: 'TUPLE3',
  [NEWTRUE]: 'NEWTRUE', [NEWFALSE]: 'NEWFALSE', [LONG1]: 'LONG1', [LONG4]: 'LONG4',
  [BINBYTES]: 'BINBYTES', [SHORT_BINBYTES]: 'SHORT_BINBYTES',
  [SHORT_BINUNICODE]: 'SHORT_BINUNICODE', [BINUNICODE8]: 'BINUNICODE8',
  [BINBYTES8]: 'BINBYTES8', [EMPTY_SET]: 'EMPTY_SET', [ADDITEMS]: 'ADDITEMS',
  [FROZENSET]: 'FROZENSET', [NEWOBJ_EX]: 'NEWOBJ_EX', [STACK_GLOBAL]: 'STACK_GLOBAL',
  [MEMOIZE]: 'MEMOIZE', [FRAME]: 'FRAME', [BYTEARRAY8]: 'BYTEARRAY8',
  [NEXT_BUFFER]: 'NEXT_BUFFER', [READONLY_BUFFER]: 'READONLY_BUFFER',
};

/** The name pickletools gives an opcode byte, e.g. 'SHORT_BINUNICODE' or '0xff'. */
export function opcodeName(op: number): string {
  return OPCODE_NAMES[op] ?? `0x${op.toString(16).padStart(2, '0')}`;
}

// ---------------------------------------------------------------- errors (cold paths)

function truncated(at: number, op: number, need: number, size: number): never {
  throw new ImportError(
    'truncated',
    `The pickle is truncated at byte ${size} of at least ${need}: opcode ${opcodeName(op)} ` +
      `at byte ${at} runs past the end of the file, which was cut off. ` +
      `Re-download or re-save it.`,
    at,
  );
}

function noStop(size: number): never {
  throw new ImportError(
    'truncated',
    `The pickle is truncated at byte ${size}: it ends without the STOP opcode, so the file ` +
      `was cut off. Re-download or re-save it.`,
    size,
  );
}

function malformed(at: number, op: number, what: string): never {
  throw new ImportError(
    'bad-opcode',
    `The pickle is malformed: opcode ${opcodeName(op)} at byte ${at} ${what}. ` +
      `The file is damaged or was not written by Python's pickle; re-save it.`,
    at,
  );
}

function underflow(at: number, op: number): never {
  malformed(at, op, 'pops more values than the stack holds');
}

function noMark(at: number, op: number): never {
  malformed(at, op, 'needs a MARK and there is none');
}

function describe(v: PickleValue): string {
  if (v === null) return 'None';
  if (Array.isArray(v)) return 'a list';
  if (v instanceof Uint8Array) return 'bytes';
  if (typeof v === 'object') return 'a dict';
  if (typeof v === 'bigint') return 'an int';
  return `a ${typeof v}`;
}

function notA(at: number, op: number, want: string, got: PickleValue): never {
  malformed(at, op, `expects a ${want} but finds ${describe(got)}`);
}

function unsafe(at: number, op: number, detail: string): never {
  throw new ImportError(
    'unsafe-opcode',
    `The pickle calls code (opcode ${opcodeName(op)}${detail} at byte ${at}); splitscope ` +
      `reads snapshots as data only and refuses it. A snapshot from ` +
      `torch.cuda.memory._dump_snapshot holds plain data only; open that file instead.`,
    at,
  );
}

function badOpcode(at: number, op: number): never {
  throw new ImportError(
    'bad-opcode',
    `The pickle has an unknown opcode 0x${op.toString(16).padStart(2, '0')} at byte ${at}: ` +
      `the file is damaged or not a pickle. Re-save it with torch.cuda.memory._dump_snapshot.`,
    at,
  );
}

// ---------------------------------------------------------------- small decoders

function isDict(v: PickleValue | undefined): v is PickleDict {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** Bytes as code points 0..255 (Python 2 str; TextDecoder('latin1') is really cp1252). */
function latin1(b: Uint8Array, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i += 8192) {
    s += String.fromCharCode.apply(
      null,
      b.subarray(i, Math.min(end, i + 8192)) as unknown as number[],
    );
  }
  return s;
}

/** Index of the '\n' ending the text operand that starts at `p`, or -1. */
function lineEnd(b: Uint8Array, p: number): number {
  return b.indexOf(0x0a, p);
}

function parseTextInt(text: string, at: number, op: number): number | bigint {
  const t = text.trim();
  if (!/^[+-]?\d+$/.test(t)) malformed(at, op, `has a bad integer ${JSON.stringify(text)}`);
  if (t.length > MAX_TEXT_DIGITS) malformed(at, op, `has an integer of over ${MAX_TEXT_DIGITS} digits`);
  if (t.length <= 15) return Number(t);
  return normalizeBig(BigInt(t));
}

function parseTextFloat(text: string, at: number): number {
  const t = text.trim().toLowerCase();
  if (t === 'inf' || t === '+inf') return Infinity;
  if (t === '-inf') return -Infinity;
  if (t === 'nan' || t === '-nan' || t === '+nan') return NaN;
  const v = t === '' ? NaN : Number(t);
  if (Number.isNaN(v)) malformed(at, FLOAT, `has a bad float ${JSON.stringify(text)}`);
  return v;
}

/** STRING operand: a Python bytes repr, quotes included (codecs.escape_decode rules). */
function decodeStringRepr(raw: string, at: number): string {
  const q = raw[0];
  if (raw.length < 2 || (q !== "'" && q !== '"') || raw[raw.length - 1] !== q) {
    malformed(at, STRING, 'has an argument that is not quoted');
  }
  const s = raw.slice(1, -1);
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\' || i + 1 >= s.length) {
      out += c;
      continue;
    }
    const e = s[++i]!;
    const simple: Record<string, string> = {
      '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t',
      v: '\v', '\n': '',
    };
    if (e in simple) out += simple[e];
    else if (e === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (e >= '0' && e <= '7') {
      let j = i;
      while (j < i + 3 && j < s.length && s[j]! >= '0' && s[j]! <= '7') j++;
      out += String.fromCharCode(parseInt(s.slice(i, j), 8) & 0xff);
      i = j - 1;
    } else out += '\\' + e;
  }
  return out;
}

/** UNICODE operand: raw-unicode-escape (latin-1 bytes plus \uXXXX and \UXXXXXXXX). */
function decodeRawUnicodeEscape(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})/g, (_m, u4?: string, u8?: string) =>
    u4 !== undefined
      ? String.fromCharCode(parseInt(u4, 16))
      : String.fromCodePoint(Math.min(parseInt(u8!, 16), 0x10ffff)),
  );
}

/** Key of a dict item: Python dicts may key by int (roundup_power2_divisions does). */
function setItem(d: PickleDict, k: PickleValue, v: PickleValue, at: number, op: number): void {
  let key: string;
  if (typeof k === 'string') key = k;
  else if (typeof k === 'number' || typeof k === 'bigint') key = String(k);
  else if (typeof k === 'boolean') key = k ? 'True' : 'False';
  else if (k === null) key = 'None';
  else malformed(at, op, `has a dict key that is ${describe(k)}; only str and int keys are read`);
  if (key === '__proto__') {
    // A plain assignment would replace the object's prototype.
    Object.defineProperty(d, key, { value: v, writable: true, enumerable: true, configurable: true });
  } else {
    d[key] = v;
  }
}

function newBytes(b: Uint8Array, start: number, len: number): Uint8Array {
  // A plain Uint8Array copy, so the result does not keep the whole input alive (slice on a
  // Node Buffer would give a view, and a Buffer).
  return new Uint8Array(b.subarray(start, start + len));
}

function memoGet(
  memo: PickleMemo,
  sparse: Map<number, PickleValue>,
  i: number,
  at: number,
  op: number,
): PickleValue {
  const v = i < memo.length ? memo.get(i) : sparse.get(i);
  if (v === undefined) malformed(at, op, `reads memo entry ${i}, which was never stored`);
  return v;
}

/** Stores memo entry i; true when it went to `sparse`. */
function memoPut(memo: PickleMemo, sparse: Map<number, PickleValue>, i: number, v: PickleValue): boolean {
  if (i < memo.length) memo.set(i, v);
  else if (i === memo.length) memo.push(v);
  else {
    sparse.set(i, v);
    return true;
  }
  return false;
}

/** MEMOIZE stores at len(memo), the number of distinct keys (CPython semantics). */
function memoize(memo: PickleMemo, sparse: Map<number, PickleValue>, v: PickleValue): void {
  let count = memo.length;
  for (const k of sparse.keys()) if (k >= memo.length) count++;
  memoPut(memo, sparse, count, v); // into `sparse` (count > memo.length) or the array
}

/** A memo value that stands for a trace row or skipped frames may not be used again. */
function checkNotStandIn(v: PickleValue): PickleValue {
  if (isStandIn(v)) throw new FastPathUnusable();
  return v;
}

/** The text operand at `p` up to its newline; null when the window ends first and more may come. */
function textOperand(b: Uint8Array, p: number, at: number, op: number, base: number, final: boolean): string | null {
  const e = lineEnd(b, p);
  if (e < 0) {
    if (!final) return null;
    truncated(at, op, base + b.length + 1, base + b.length);
  }
  return latin1(b, p, e);
}

// ---------------------------------------------------------------- dict objects

// Dicts are created empty and filled key by key. An object from `{}` has room for 4
// properties inside it and moves the rest to a separate array: one more allocation and
// more bytes for every 7-key trace entry. Objects from a constructor get the room V8's slack
// tracking settles on after its first few instances, so a warm-up instance with 8
// properties makes every dict hold up to 8 in place. The prototype is Object.prototype,
// so the objects are indistinguishable from literals.
const IN_OBJECT_SLOTS = 8;
const Dict = function Dict(this: PickleDict) {} as unknown as { new (): PickleDict };
Dict.prototype = Object.prototype;
{
  // Slack tracking ends at the 7th instance and keeps the most room any instance used.
  const first = new Dict();
  for (let j = 0; j < IN_OBJECT_SLOTS; j++) first[`\u0000slot${j}`] = null;
  for (let i = 0; i < 8; i++) new Dict();
}

// Trace entries are nearly all the dicts in a snapshot (900k in a 46 MB file), always with
// these keys in this order. Filling them with named stores, whose inline caches stay
// monomorphic, is several times cheaper than generic keyed stores; any other key set takes
// the generic path, and the result is the same either way.
const TRACE_ENTRY_KEYS = [
  'action', 'addr', 'size', 'stream', 'time_us', 'compile_context', 'user_metadata', 'frames',
];

function isTraceEntry(s: PickleValue[], m: number, count: number): boolean {
  return (
    s[m + 2] === 'addr' &&
    s[m + 4] === 'size' &&
    s[m + 6] === 'stream' &&
    s[m + 8] === 'time_us' &&
    s[m + 10] === 'compile_context' &&
    s[m + 12] === 'user_metadata' &&
    (count === 14 || s[m + 14] === 'frames')
  );
}

function fillTraceEntry(d: PickleDict, s: PickleValue[], m: number, count: number): void {
  d.action = s[m + 1]!;
  d.addr = s[m + 3]!;
  d.size = s[m + 5]!;
  d.stream = s[m + 7]!;
  d.time_us = s[m + 9]!;
  d.compile_context = s[m + 11]!;
  d.user_metadata = s[m + 13]!;
  if (count === 16) d.frames = s[m + 15]!;
}

// Seed the hidden classes of trace entries with a null and a small int in every field, so V8
// gives the fields the tagged representation from the start: an address then stays the
// heap number it was read as, instead of being copied into a fresh double box per entry.
{
  const seedValues: PickleValue[] = [];
  for (let i = 0; i < 8; i++) seedValues.push(TRACE_ENTRY_KEYS[i]!, null);
  fillTraceEntry(new Dict(), seedValues, 0, 16);
  fillTraceEntry(new Dict(), seedValues, 0, 14);
  for (let i = 1; i < 16; i += 2) seedValues[i] = 0;
  fillTraceEntry(new Dict(), seedValues, 0, 16);
  fillTraceEntry(new Dict(), seedValues, 0, 14);
}

// ---------------------------------------------------------------- the reader

/**
 * Reads a pickle made of plain data (dict, list, tuple, set, str, bytes, int, float, bool,
 * None) into JS values: dicts become plain objects, lists, tuples and sets become arrays,
 * bytes a Uint8Array, ints a number when exact (|v| <= 2^53 - 1) and a bigint otherwise.
 * Objects the pickle memoizes and reuses are shared, never copied.
 * Throws ImportError ('truncated', 'unsafe-opcode', 'bad-opcode', 'too-deep') on bad input.
 */
export function readPickle(bytes: Uint8Array, options: ReadPickleOptions = {}): PickleValue {
  const read = new PickleReader(bytes.length, options).read(bytes, 0, true);
  return (read as { value: PickleValue }).value;
}

/**
 * Bytes a window must hold past where reading goes on, unless it runs to the end of the pickle:
 * every opcode but a long string or bytes fits in far less (the longest other takes 257 bytes, and
 * a margin must be at least that), and so does a trace entry that the fast path reads whole.
 */
export const WINDOW_MARGIN = 1 << 20;
const LONGEST_SHORT_OPCODE = 257;

/** The margin a reader with these options keeps. */
export function windowMargin(options: ReadPickleOptions): number {
  return Math.max(LONGEST_SHORT_OPCODE, options.windowMargin ?? WINDOW_MARGIN);
}

/** What PickleReader.read says when its window ran out before the pickle did. */
export interface PickleNeedsMore {
  /** Reading goes on from this byte of the window: the next window starts there. */
  keepFrom: number;
  /** The next window must run at least to this byte of the pickle (more if it can). */
  need: number;
}

/**
 * The reader, resumable: it reads a pickle one window of its bytes after another (a file read in
 * chunks need never be held whole), and keeps its stack and memo between windows.
 */
export class PickleReader {
  // The stack is used with an explicit height `sp` so popping never reallocates; `floor` is
  // the height at the innermost MARK (Python keeps each MARK's items on a separate list).
  private readonly stack: PickleValue[] = [];
  private sp = 0;
  private floor = 0;
  // Enclosing floors, one per open MARK, used as a stack of height `depth`.
  private readonly marks: number[] = [];
  private depth = 0;
  // Memo indices are dense from 0 in every pickle Python writes; PUT may in principle use
  // any index, and those far past the end go to `sparse` so the array stays packed.
  private readonly memo = new PickleMemo();
  private readonly sparse = new Map<number, PickleValue>();
  private hasSparse = false;
  private readonly strings: StringCache;
  /** The byte of the pickle at which progress is next reported. */
  private nextProgress: number;

  /** `total`: the pickle's size in bytes, for progress (0 if unknown). */
  constructor(
    private readonly total: number,
    private readonly options: ReadPickleOptions = {},
  ) {
    this.strings = new StringCache(options.intern);
    this.nextProgress = options.onProgress && total > 0 ? PROGRESS_STEP : Infinity;
  }

  /**
   * Reads on from the start of `b`, byte `base` of the pickle, where the last window left off.
   * `final`: `b` runs to the end of the pickle. Returns the value once STOP is read; else (never
   * when final) where the next window must start and how far it must run.
   */
  read(b: Uint8Array, base: number, final: boolean): { value: PickleValue } | PickleNeedsMore {
    const n = b.length;
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const { options, stack, marks, memo, sparse, strings } = this;
    const onProgress = options.onProgress;
    const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    // Locals in the loop, not fields: they then live in registers. No closures capture them.
    let { sp, floor, depth, hasSparse } = this;
    let nextProgress = this.nextProgress - base;
    const total = final ? base + n : this.total;
    // Past `soft` the window may end inside an opcode: stop there and wait for the next one.
    const margin = windowMargin(options);
    const soft = final ? n + 1 : n - margin;
    strings.rebase(b);
    const rows = options.fastPath;
    rows?.attach(b, view, memo, strings, final ? Infinity : soft);

    let pos = 0;
    /** Set where reading stops for more bytes: the pickle's byte the next window must reach. */
    let need = -1;
    loop: for (;;) {
      if (pos >= soft) {
        need = base + pos + 2 * margin;
        break;
      }
      // Where the opcode starts in the pickle (for messages); `pos` is where it is in the window.
      const at = base + pos;
      // Past the end this reads undefined, which lands in `default`: no bounds test per op.
      const op = b[pos++]!;
      switch (op) {
        case BINGET: {
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          const i = b[pos++]!;
          const v = i < memo.length ? memo.get(i)! : memoGet(memo, sparse, i, at, op);
          if (typeof v === 'object' && isStandIn(v)) checkNotStandIn(v);
          stack[sp++] = v;
          break;
        }
        case LONG_BINGET: {
          if (pos + 4 > n) truncated(at, op, base + pos + 4, base + n);
          const i = view.getUint32(pos, true);
          pos += 4;
          const v = i < memo.length ? memo.get(i)! : memoGet(memo, sparse, i, at, op);
          if (typeof v === 'object' && isStandIn(v)) checkNotStandIn(v);
          stack[sp++] = v;
          break;
        }
        case MEMOIZE:
          if (sp <= floor) underflow(at, op);
          if (!hasSparse) memo.push(stack[sp - 1]!);
          else memoize(memo, sparse, stack[sp - 1]!);
          break;
        case MARK:
          // Progress is checked here and at FRAME only: every real pickle has plenty of both.
          if (pos >= nextProgress) {
            onProgress!((base + pos) / total);
            nextProgress = pos + PROGRESS_STEP;
          }
          if (depth >= maxDepth) {
            throw new ImportError(
              'too-deep',
              `The pickle nests containers more than ${maxDepth} deep (MARK at byte ${at}); a ` +
                `memory snapshot never does, so the file is damaged or hostile and was not read.`,
              at,
            );
          }
          marks[depth++] = floor;
          floor = sp;
          break;
        case EMPTY_DICT:
          if (rows !== undefined && !hasSparse) {
            const end = rows.read(pos);
            if (end >= 0) {
              for (let k = rows.lastCount; k > 0; k--) stack[sp++] = ROW_STAND_IN;
              pos = end;
              break;
            }
          }
          stack[sp++] = new Dict();
          break;
        case EMPTY_LIST:
          stack[sp++] = [];
          break;
        case SETITEMS: {
          if (depth === 0) noMark(at, op);
          const m = floor;
          floor = marks[--depth]!;
          if (m <= floor) underflow(at, op);
          const d = stack[m - 1];
          if (!isDict(d)) notA(at, op, 'dict', d!);
          const count = sp - m;
          if (count & 1) malformed(at, op, 'has a key without a value');
          if ((count === 14 || count === 16) && stack[m] === 'action' && isTraceEntry(stack, m, count)) {
            fillTraceEntry(d, stack, m, count);
          } else {
            for (let i = m; i < sp; i += 2) {
              const k = stack[i]!;
              if (typeof k === 'string' && k !== '__proto__') d[k] = stack[i + 1]!;
              else setItem(d, k, stack[i + 1]!, at, op);
            }
          }
          sp = m;
          break;
        }
        case APPENDS: {
          if (depth === 0) noMark(at, op);
          const m = floor;
          floor = marks[--depth]!;
          if (m <= floor) underflow(at, op);
          const list = stack[m - 1];
          if (!Array.isArray(list)) notA(at, op, 'list', list!);
          if (rows !== undefined) rows.append(list, stack, m, sp);
          else for (let i = m; i < sp; i++) list.push(stack[i]!);
          sp = m;
          break;
        }
        case SHORT_BINUNICODE: {
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          const len = b[pos++]!;
          if (pos + len > n) truncated(at, op, base + pos + len, base + n);
          stack[sp++] = strings.get(pos, len);
          pos += len;
          break;
        }
        case BININT1:
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          stack[sp++] = b[pos++]!;
          break;
        case BININT2:
          if (pos + 2 > n) truncated(at, op, base + pos + 2, base + n);
          stack[sp++] = b[pos]! | (b[pos + 1]! << 8);
          pos += 2;
          break;
        case BININT:
          if (pos + 4 > n) truncated(at, op, base + pos + 4, base + n);
          stack[sp++] = view.getInt32(pos, true);
          pos += 4;
          break;
        case LONG1: {
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          const len = b[pos++]!;
          if (pos + len > n) truncated(at, op, base + pos + len, base + n);
          stack[sp++] = decodeLong(b, pos, len);
          pos += len;
          break;
        }
        case BINFLOAT:
          if (pos + 8 > n) truncated(at, op, base + pos + 8, base + n);
          stack[sp++] = view.getFloat64(pos, false);
          pos += 8;
          break;
        case NONE:
          stack[sp++] = null;
          break;
        case NEWTRUE:
          stack[sp++] = true;
          break;
        case NEWFALSE:
          stack[sp++] = false;
          break;
        case APPEND: {
          if (sp - floor < 2) underflow(at, op);
          const list = stack[sp - 2];
          if (!Array.isArray(list)) notA(at, op, 'list', list!);
          if (rows !== undefined) rows.append(list, stack, sp - 1, sp);
          else list.push(stack[sp - 1]!);
          sp--;
          break;
        }
        case SETITEM: {
          if (sp - floor < 3) underflow(at, op);
          const d = stack[sp - 3];
          if (!isDict(d)) notA(at, op, 'dict', d!);
          const k = stack[sp - 2]!;
          if (typeof k === 'string' && k !== '__proto__') d[k] = stack[sp - 1]!;
          else setItem(d, k, stack[sp - 1]!, at, op);
          sp -= 2;
          break;
        }
        case TUPLE1:
          if (sp - floor < 1) underflow(at, op);
          stack[sp - 1] = [stack[sp - 1]!];
          break;
        case TUPLE2:
          if (sp - floor < 2) underflow(at, op);
          stack[sp - 2] = [stack[sp - 2]!, stack[sp - 1]!];
          sp -= 1;
          break;
        case TUPLE3:
          if (sp - floor < 3) underflow(at, op);
          stack[sp - 3] = [stack[sp - 3]!, stack[sp - 2]!, stack[sp - 1]!];
          sp -= 2;
          break;
        case EMPTY_TUPLE:
          stack[sp++] = [];
          break;
        case TUPLE:
        case LIST:
        case FROZENSET: {
          if (depth === 0) noMark(at, op);
          const m = floor;
          floor = marks[--depth]!;
          const items = stack.slice(m, sp);
          sp = m;
          stack[sp++] = items;
          break;
        }
        case DICT: {
          if (depth === 0) noMark(at, op);
          const m = floor;
          floor = marks[--depth]!;
          if ((sp - m) & 1) malformed(at, op, 'has a key without a value');
          const d = new Dict();
          for (let i = m; i < sp; i += 2) setItem(d, stack[i]!, stack[i + 1]!, at, op);
          sp = m;
          stack[sp++] = d;
          break;
        }
        // Sets have no JSON form; they become arrays, like tuples.
        case EMPTY_SET:
          stack[sp++] = [];
          break;
        case ADDITEMS: {
          if (depth === 0) noMark(at, op);
          const m = floor;
          floor = marks[--depth]!;
          if (m <= floor) underflow(at, op);
          const set = stack[m - 1];
          if (!Array.isArray(set)) notA(at, op, 'set', set!);
          for (let i = m; i < sp; i++) set.push(stack[i]!);
          sp = m;
          break;
        }
        case BINPUT:
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          if (sp <= floor) underflow(at, op);
          hasSparse = memoPut(memo, sparse, b[pos++]!, stack[sp - 1]!) || hasSparse;
          break;
        case LONG_BINPUT:
          if (pos + 4 > n) truncated(at, op, base + pos + 4, base + n);
          if (sp <= floor) underflow(at, op);
          hasSparse = memoPut(memo, sparse, view.getUint32(pos, true), stack[sp - 1]!) || hasSparse;
          pos += 4;
          break;
        // Protocols 0 and 1: a text operand up to a newline.
        case PUT:
        case GET:
        case INT:
        case LONG:
        case FLOAT:
        case STRING:
        case UNICODE: {
          const text = textOperand(b, pos, at, op, base, final);
          if (text === null) {
            need = base + n + 1;
            pos = at - base;
            break loop;
          }
          pos += text.length + 1;
          if (op === PUT || op === GET) {
            const i = parseTextInt(text, at, op);
            if (typeof i !== 'number' || i < 0) malformed(at, op, 'has a negative or huge memo index');
            if (op === GET) stack[sp++] = checkNotStandIn(memoGet(memo, sparse, i, at, op));
            else {
              if (sp <= floor) underflow(at, op);
              hasSparse = memoPut(memo, sparse, i, stack[sp - 1]!) || hasSparse;
            }
          } else if (op === INT) {
            // Protocol 0 spells True and False as INT 01 and INT 00.
            stack[sp++] = text === '01' ? true : text === '00' ? false : parseTextInt(text, at, op);
          } else if (op === LONG) stack[sp++] = parseTextInt(text.endsWith('L') ? text.slice(0, -1) : text, at, op);
          else if (op === FLOAT) stack[sp++] = parseTextFloat(text, at);
          else if (op === STRING) stack[sp++] = decodeStringRepr(text.endsWith('\r') ? text.slice(0, -1) : text, at);
          else stack[sp++] = decodeRawUnicodeEscape(text);
          break;
        }
        // A length, then that many bytes: a string, bytes or a long int.
        case BINUNICODE:
        case BINBYTES:
        case BINSTRING:
        case LONG4:
        case BINUNICODE8:
        case BINBYTES8:
        case BYTEARRAY8: {
          const wide = op === BINUNICODE8 || op === BINBYTES8 || op === BYTEARRAY8;
          const head = wide ? 8 : 4;
          if (pos + head > n) truncated(at, op, base + pos + head, base + n);
          // Checked against the input before anything is allocated: a hostile length is
          // reported as truncation, never attempted.
          const len = wide
            ? view.getUint32(pos, true) + view.getUint32(pos + 4, true) * 4294967296
            : op === BINSTRING || op === LONG4
              ? view.getInt32(pos, true)
              : view.getUint32(pos, true);
          pos += head;
          if (len < 0) malformed(at, op, 'has a negative length');
          if (len > n - pos) {
            if (!final) {
              need = base + pos + len;
              pos = at - base;
              break loop;
            }
            truncated(at, op, base + pos + len, base + n);
          }
          // As LONG's text is bounded (MAX_TEXT_DIGITS): a bigint of millions of bytes takes seconds to make.
          if (op === LONG4 && len > MAX_LONG_BYTES) malformed(at, op, `has an integer of over ${MAX_TEXT_DIGITS} digits`);
          stack[sp++] =
            op === BINUNICODE || op === BINUNICODE8
              ? strings.get(pos, len)
              : op === BINSTRING
                ? latin1(b, pos, pos + len)
                : op === LONG4
                  ? decodeLong(b, pos, len)
                  : newBytes(b, pos, len);
          pos += len;
          break;
        }
        case POP:
          if (sp > floor) checkNotStandIn(stack[--sp]!);
          else if (depth > 0) floor = marks[--depth]!; // CPython: POP on an empty frame drops the MARK
          else underflow(at, op);
          break;
        case POP_MARK:
          if (depth === 0) noMark(at, op);
          for (let i = floor; i < sp; i++) checkNotStandIn(stack[i]!);
          sp = floor;
          floor = marks[--depth]!;
          break;
        case DUP:
          if (sp <= floor) underflow(at, op);
          stack[sp] = checkNotStandIn(stack[sp - 1]!);
          sp++;
          break;
        case SHORT_BINBYTES: {
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          const len = b[pos++]!;
          if (pos + len > n) truncated(at, op, base + pos + len, base + n);
          stack[sp++] = newBytes(b, pos, len);
          pos += len;
          break;
        }
        case SHORT_BINSTRING: {
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          const len = b[pos++]!;
          if (pos + len > n) truncated(at, op, base + pos + len, base + n);
          stack[sp++] = latin1(b, pos, pos + len);
          pos += len;
          break;
        }
        case PROTO: {
          if (pos >= n) truncated(at, op, base + pos + 1, base + n);
          const v = b[pos++]!;
          if (v > 5) {
            throw new ImportError(
              'bad-opcode',
              `The pickle uses protocol ${v} (byte ${at}); splitscope reads protocols 0 to 5. ` +
                `Re-save it with pickle protocol 4, as torch.cuda.memory._dump_snapshot does.`,
              at,
            );
          }
          break;
        }
        case FRAME: {
          // Frames only group opcodes for buffered reading; the data is read straight through.
          if (pos + 8 > n) truncated(at, op, base + pos + 8, base + n);
          const len = view.getUint32(pos, true) + view.getUint32(pos + 4, true) * 4294967296;
          pos += 8;
          if (len > n - pos) {
            if (!final) {
              need = base + pos + len;
              pos = at - base;
              break loop;
            }
            truncated(at, op, base + pos + len, base + n);
          }
          if (pos >= nextProgress) {
            onProgress!((base + pos) / total);
            nextProgress = pos + PROGRESS_STEP;
          }
          break;
        }
        case STOP: {
          if (sp <= floor) underflow(at, op);
          if (onProgress) onProgress(1);
          return { value: stack[sp - 1]! };
        }
        case GLOBAL:
        case INST: {
          // Name the callable in the message: it tells the user what the file wanted to run.
          const e1 = lineEnd(b, pos);
          const e2 = e1 < 0 ? -1 : lineEnd(b, e1 + 1);
          if (e2 < 0 && !final) {
            need = base + n + 1;
            pos = at - base;
            break loop;
          }
          const name = e2 < 0 ? '' : ` '${latin1(b, pos, e1)} ${latin1(b, e1 + 1, e2)}'`;
          unsafe(at, op, name.length > 200 ? '' : name);
          break;
        }
        case STACK_GLOBAL: {
          const mod = stack[sp - 2];
          const name = stack[sp - 1];
          unsafe(
            at,
            op,
            sp - floor >= 2 && typeof mod === 'string' && typeof name === 'string'
              ? ` '${mod} ${name}'`.slice(0, 200)
              : '',
          );
          break;
        }
        case REDUCE:
        case BUILD:
        case OBJ:
        case NEWOBJ:
        case NEWOBJ_EX:
        case PERSID:
        case BINPERSID:
        case EXT1:
        case EXT2:
        case EXT4:
        case NEXT_BUFFER:
        case READONLY_BUFFER:
          unsafe(at, op, '');
          break;
        default:
          if (pos > n) noStop(base + n);
          badOpcode(at, op);
      }
    }
    this.sp = sp;
    this.floor = floor;
    this.depth = depth;
    this.hasSparse = hasSparse;
    this.nextProgress = nextProgress + base;
    return { keepFrom: pos, need };
  }
}
