// A pickle writer (protocol 4, no FRAME opcodes: they are optional) for the plain data
// splitscope exports: snapshots that Python's pickle and pytorch.org/memory_viz can load.
// Like Python's pickler it memoizes, so a frame list shared by a hundred thousand trace
// entries, or a file name in every frame, is written once and referenced after that.

import type { PickleValue } from './pickle-value';
import {
  APPEND,
  APPENDS,
  BINBYTES,
  BINBYTES8,
  BINFLOAT,
  BINGET,
  BININT,
  BININT1,
  BININT2,
  BINUNICODE,
  BINUNICODE8,
  EMPTY_DICT,
  EMPTY_LIST,
  EMPTY_TUPLE,
  LONG1,
  LONG4,
  LONG_BINGET,
  MARK,
  MEMOIZE,
  NEWFALSE,
  NEWTRUE,
  NONE,
  PROTO,
  SETITEMS,
  SHORT_BINBYTES,
  SHORT_BINUNICODE,
  STOP,
  TUPLE,
  TUPLE1,
  TUPLE2,
  TUPLE3,
} from './pickle-opcodes';

/** A Python tuple. Arrays are written as lists; wrap an array in this to get a tuple. */
export class PickleTuple {
  constructor(readonly items: readonly PickleWritable[]) {}
}

export function tuple(...items: PickleWritable[]): PickleTuple {
  return new PickleTuple(items);
}

/**
 * A list whose items are known to be referenced from nowhere else (trace entries): each takes its
 * memo slot as Python's pickler writes it (readers expect the MEMOIZE), but is not looked up again,
 * which saves a lookup table of a million objects. Their own contents are memoized as usual.
 */
export class PickleUnsharedItems {
  constructor(readonly items: readonly PickleWritable[]) {}
}

export function unsharedItems(items: readonly PickleWritable[]): PickleUnsharedItems {
  return new PickleUnsharedItems(items);
}

/** What writePickle accepts: PickleValue plus tuples and unshared lists; `undefined` dict values are skipped. */
export type PickleWritable =
  | PickleValue
  | undefined
  | PickleTuple
  | PickleUnsharedItems
  | readonly PickleWritable[]
  | { readonly [key: string]: PickleWritable };

/** Python's pickler batches APPENDS and SETITEMS by this many items. */
const BATCH = 1000;
/** Nesting past this would overflow the JS stack (a snapshot is 5 levels deep). */
const MAX_DEPTH = 5000;

const encoder = new TextEncoder();

class PickleOutput {
  buf = new Uint8Array(1 << 16);
  view = new DataView(this.buf.buffer);
  pos = 0;
  /** Strings by value and containers by identity, to the memo index they were stored at. */
  readonly strings = new Map<string, number>();
  readonly objects = new Map<object, number>();
  memoCount = 0;

  reserve(k: number): void {
    if (this.pos + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + k) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(v: number): void {
    this.reserve(1);
    this.buf[this.pos++] = v;
  }

  memoize(): number {
    this.byte(MEMOIZE);
    return this.memoCount++;
  }

  get(index: number): void {
    this.reserve(5);
    if (index < 256) {
      this.buf[this.pos++] = BINGET;
      this.buf[this.pos++] = index;
    } else {
      this.buf[this.pos++] = LONG_BINGET;
      this.view.setUint32(this.pos, index, true);
      this.pos += 4;
    }
  }

  int(v: number): void {
    this.reserve(10);
    const b = this.buf;
    if (v >= 0 && v < 256) {
      b[this.pos++] = BININT1;
      b[this.pos++] = v;
    } else if (v >= 0 && v < 65536) {
      b[this.pos++] = BININT2;
      b[this.pos++] = v & 0xff;
      b[this.pos++] = v >>> 8;
    } else if (v >= -0x80000000 && v <= 0x7fffffff) {
      b[this.pos++] = BININT;
      this.view.setInt32(this.pos, v, true);
      this.pos += 4;
    } else if (v > 0) {
      // LONG1: little-endian, minimal length, with a zero byte if the top bit is set.
      // Split at 2^32 and shift, rather than `% 256` on doubles, which is a slow fmod.
      const hi = Math.floor(v / 4294967296);
      const lo = v - hi * 4294967296;
      b[this.pos++] = LONG1;
      const lenAt = this.pos++;
      b[this.pos++] = lo & 0xff;
      b[this.pos++] = (lo >>> 8) & 0xff;
      b[this.pos++] = (lo >>> 16) & 0xff;
      b[this.pos++] = lo >>> 24;
      let len = 4;
      let last = lo >>> 24;
      for (let x = hi; x > 0; x >>>= 8) {
        last = x & 0xff;
        b[this.pos++] = last;
        len++;
      }
      if (last & 0x80) {
        b[this.pos++] = 0;
        len++;
      }
      b[lenAt] = len;
    } else {
      this.bigint(BigInt(v));
    }
  }

  bigint(v: bigint): void {
    if (v >= -0x80000000n && v <= 0x7fffffffn) return this.int(Number(v));
    // Two's complement in the fewest bytes that keep the sign, as Python's encode_long.
    let len = 1;
    while (v >= 1n << BigInt(len * 8 - 1) || v < -(1n << BigInt(len * 8 - 1))) len++;
    let u = v < 0n ? v + (1n << BigInt(len * 8)) : v;
    this.reserve(len + 5);
    if (len < 256) {
      this.buf[this.pos++] = LONG1;
      this.buf[this.pos++] = len;
    } else {
      this.buf[this.pos++] = LONG4;
      this.view.setInt32(this.pos, len, true);
      this.pos += 4;
    }
    for (let i = 0; i < len; i++) {
      this.buf[this.pos++] = Number(u & 0xffn);
      u >>= 8n;
    }
  }

  float(v: number): void {
    this.reserve(9);
    this.buf[this.pos++] = BINFLOAT;
    this.view.setFloat64(this.pos, v, false);
    this.pos += 8;
  }

  string(s: string): void {
    const seen = this.strings.get(s);
    if (seen !== undefined) return this.get(seen);
    const n = s.length;
    // ASCII is nearly everything in a snapshot: write it directly; otherwise encode.
    let ascii = n < 256;
    if (ascii) {
      for (let i = 0; i < n; i++) {
        if (s.charCodeAt(i) > 0x7f) {
          ascii = false;
          break;
        }
      }
    }
    if (ascii) {
      this.reserve(n + 2);
      const b = this.buf;
      b[this.pos++] = SHORT_BINUNICODE;
      b[this.pos++] = n;
      for (let i = 0; i < n; i++) b[this.pos++] = s.charCodeAt(i);
    } else {
      // Lone surrogates become U+FFFD here; Python would write them with surrogatepass.
      const bytes = encoder.encode(s);
      const len = bytes.length;
      this.reserve(len + 9);
      if (len < 256) {
        this.buf[this.pos++] = SHORT_BINUNICODE;
        this.buf[this.pos++] = len;
      } else if (len <= 0xffffffff) {
        this.buf[this.pos++] = BINUNICODE;
        this.view.setUint32(this.pos, len, true);
        this.pos += 4;
      } else {
        this.buf[this.pos++] = BINUNICODE8;
        this.view.setUint32(this.pos, len % 4294967296, true);
        this.view.setUint32(this.pos + 4, Math.floor(len / 4294967296), true);
        this.pos += 8;
      }
      this.buf.set(bytes, this.pos);
      this.pos += len;
    }
    this.strings.set(s, this.memoize());
  }

  bytes(v: Uint8Array): void {
    const len = v.length;
    this.reserve(len + 9);
    if (len < 256) {
      this.buf[this.pos++] = SHORT_BINBYTES;
      this.buf[this.pos++] = len;
    } else if (len <= 0xffffffff) {
      this.buf[this.pos++] = BINBYTES;
      this.view.setUint32(this.pos, len, true);
      this.pos += 4;
    } else {
      this.buf[this.pos++] = BINBYTES8;
      this.view.setUint32(this.pos, len % 4294967296, true);
      this.view.setUint32(this.pos + 4, Math.floor(len / 4294967296), true);
      this.pos += 8;
    }
    this.buf.set(v, this.pos);
    this.pos += len;
  }

  value(v: PickleWritable, depth: number): void {
    switch (typeof v) {
      case 'string':
        return this.string(v);
      case 'number':
        // Integral doubles past 2^53 may not have been integers at all: write them as floats,
        // which reads back as the same number. Exact big integers travel as bigint.
        return Number.isSafeInteger(v) ? this.int(v) : this.float(v);
      case 'boolean':
        return this.byte(v ? NEWTRUE : NEWFALSE);
      case 'bigint':
        return this.bigint(v);
      case 'undefined':
        return this.byte(NONE);
      case 'object':
        break;
      default:
        throw new TypeError(`writePickle: cannot write a ${typeof v}`);
    }
    if (v === null) return this.byte(NONE);
    if (depth > MAX_DEPTH) throw new RangeError(`writePickle: nested deeper than ${MAX_DEPTH}`);
    const seen = this.objects.get(v);
    if (seen !== undefined) return this.get(seen);
    if (v instanceof Uint8Array) return this.bytes(v);
    if (v instanceof PickleTuple) return this.tuple(v.items, depth);
    if (v instanceof PickleUnsharedItems) return this.list(v.items, depth, false);
    if (Array.isArray(v)) return this.list(v as readonly PickleWritable[], depth, true);
    return this.dict(v as { readonly [key: string]: PickleWritable }, depth, true);
  }

  /** value() for an item of an unshared list: a container gets no memo entry. */
  unshared(v: PickleWritable, depth: number): void {
    if (typeof v !== 'object' || v === null || v instanceof Uint8Array || v instanceof PickleTuple || v instanceof PickleUnsharedItems) {
      return this.value(v, depth);
    }
    if (Array.isArray(v)) return this.list(v as readonly PickleWritable[], depth, false);
    return this.dict(v as { readonly [key: string]: PickleWritable }, depth, false);
  }

  tuple(items: readonly PickleWritable[], depth: number): void {
    const n = items.length;
    if (n === 0) return this.byte(EMPTY_TUPLE);
    if (n > 3) this.byte(MARK);
    for (let i = 0; i < n; i++) this.value(items[i], depth + 1);
    this.byte(n === 1 ? TUPLE1 : n === 2 ? TUPLE2 : n === 3 ? TUPLE3 : TUPLE);
  }

  list(items: readonly PickleWritable[], depth: number, memoize: boolean): void {
    this.byte(EMPTY_LIST);
    // Memoized before the items, as Python does, so a list that contains itself works.
    if (memoize) this.objects.set(items, this.memoize());
    else this.memoize();
    const n = items.length;
    if (n === 1) {
      this.value(items[0], depth + 1);
      this.byte(APPEND);
      return;
    }
    for (let start = 0; start < n; start += BATCH) {
      const end = Math.min(n, start + BATCH);
      this.byte(MARK);
      if (memoize) for (let i = start; i < end; i++) this.value(items[i], depth + 1);
      else for (let i = start; i < end; i++) this.unshared(items[i], depth + 1);
      this.byte(APPENDS);
    }
  }

  // The last key seen at each position of a dict and its memo index: consecutive dicts of
  // one shape (a million trace entries) then find their keys without a Map lookup.
  private readonly keyAt: (string | null)[] = new Array<string | null>(32).fill(null);
  private readonly keyMemoAt: number[] = new Array<number>(32).fill(0);

  dict(d: { readonly [key: string]: PickleWritable }, depth: number, memoize: boolean): void {
    this.byte(EMPTY_DICT);
    if (memoize) this.objects.set(d, this.memoize());
    else this.memoize();
    const keys = Object.keys(d);
    let inBatch = 0;
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j]!;
      const v = d[key];
      if (v === undefined) continue; // as JSON.stringify does
      if (inBatch === 0) this.byte(MARK);
      if (this.keyAt[j] === key) this.get(this.keyMemoAt[j]!);
      else {
        this.string(key);
        if (j < 32) {
          this.keyAt[j] = key;
          this.keyMemoAt[j] = this.strings.get(key)!;
        }
      }
      this.value(v, depth + 1);
      if (++inBatch === BATCH) {
        this.byte(SETITEMS);
        inBatch = 0;
      }
    }
    if (inBatch > 0) this.byte(SETITEMS);
  }
}

/**
 * Writes `value` as a protocol-4 pickle that Python's pickle.loads reads back: null and
 * undefined -> None, integers up to 2^53 and bigints -> int, other numbers -> float, string -> str,
 * Uint8Array -> bytes, arrays -> list, PickleTuple -> tuple, plain objects -> dict.
 */
export function writePickle(value: PickleWritable): Uint8Array {
  const out = new PickleOutput();
  out.byte(PROTO);
  out.byte(4);
  out.value(value, 0);
  out.byte(STOP);
  return out.buf.slice(0, out.pos);
}
