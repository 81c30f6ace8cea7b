// The pickle reader's fast path for device trace entries, taken when the caller wants the trace as
// columns (the CLI's replay) rather than as objects. torch writes each entry as ~26 opcodes
// (EMPTY_DICT MEMOIZE MARK, key/value pairs, SETITEMS); reading them here writes one row of
// TraceColumns and builds no dict, so a 900k-entry trace leaves nothing for the GC to carry.
// An entry that strays in any way from the shape torch writes (another key, a big int, a value of
// the wrong type, a cut-off file) is left to the generic reader and the usual checks; a file the
// fast path cannot vouch for is read again the generic way (decodeSnapshotForReplay).
import { actionCode } from '../../allocator/trace-action';
import { decodeLong } from '../pickle/pickle-ints';
import { FastPathStandIn, FastPathUnusable, ROW_STAND_IN, SKIPPED_STAND_INS, type PickleFastPath } from '../pickle/pickle-fast-path';
import {
  APPEND,
  APPENDS,
  BINFLOAT,
  BINGET,
  BININT,
  BININT1,
  BININT2,
  EMPTY_DICT,
  EMPTY_LIST,
  FRAME,
  LONG1,
  LONG_BINGET,
  MARK,
  MEMOIZE,
  SETITEMS,
  SHORT_BINUNICODE,
} from '../pickle/pickle-opcodes';
import { PickleMemo } from '../pickle/pickle-memo';
import type { StringCache } from '../pickle/pickle-string-cache';
import type { PickleValue } from '../pickle/pickle-value';
import { Action } from '../../allocator/trace-action';
import { MAX_RECORDABLE_BYTES, UNKNOWN_LINE, type Frame } from './snapshot';
import { entryFlags, frameMarks, TraceColumnsBuilder } from './trace-columns';

/** Returned by `value()` for anything the fast path does not read. */
const NO = Symbol('no');
type Read = PickleValue | typeof NO;

function isInt(v: Read): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** A frame's line: any int (PyTorch writes 2^64 - 1 for an unknown one). */
function isLine(v: Read): boolean {
  return isInt(v) || typeof v === 'bigint';
}

function isFrame(v: Read): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Uint8Array) return false;
  const f = v as Record<string, PickleValue>;
  return typeof f.name === 'string' && typeof f.filename === 'string' && isLine(f.line!);
}

/** `count` rows, next in reading order, that belong in `list` before its item `at`. */
export interface RowRun {
  list: PickleValue[];
  at: number;
  count: number;
}

/**
 * Trace entries read as rows, and where they belong. The lists never hold their rows' stand-ins
 * (growing a million-item list costs much of what the dicts did): APPEND(S) records runs instead.
 * Every batch must append exactly the rows read since the last one, as torch's pickles do, so
 * rows reach the lists in reading order.
 */
export class TraceRows implements PickleFastPath {
  readonly columns: TraceColumnsBuilder;
  /** Rows already appended to a list. */
  appended = 0;
  readonly runs: RowRun[] = [];
  /** How many entries the last successful read() read. */
  lastCount = 0;
  private memo = new PickleMemo();
  /** The stand-ins' indices in the memo (PickleMemo.share). */
  private rowIndex = 0;
  /** Memo indices of SKIPPED_STAND_INS, by marks. */
  private skippedIndices: number[] = [];
  private strings!: StringCache;
  private b: Uint8Array = new Uint8Array(0);
  private view: DataView = new DataView(new ArrayBuffer(0));
  private pos = 0;
  /** Where the window may end within an entry: a batch stops before an entry that starts there. */
  private soft = Infinity;
  /** The marks (trace-columns.ts's frameMarks) of the frames of the list being read so far. */
  private marksSeen = 0;
  /** With details: the frame list of the entry being read, and the lists met so far with their
   * marks (the memo holds the lists themselves then, not stand-ins). */
  private entryList = -1;
  /** While a new list is read with details: its frames, and their memo slots (frames are told apart by them). */
  private collecting = false;
  private readonly listFrames: Frame[] = [];
  private readonly listIds: number[] = [];
  /** How many of listFrames and listIds the list being read holds (they are reused, never shortened:
   * setting an array's length costs a call into the runtime). */
  private listLength = 0;
  /** Memo indices of the stand-ins of interned lists, by 4 * index + marks. */
  private readonly standIns: number[] = [];
  /** Frames whose line PyTorch did not know (2^64 - 1): read as UNKNOWN_LINE, with details. */
  unknownLines = 0;

  /**
   * `pickleBytes`: the size of the pickle, to size the columns (an entry takes 40 bytes or more).
   * `details`: keep each entry's time and stack frames too (TraceColumns.details).
   */
  constructor(
    pickleBytes: number,
    readonly details = false,
  ) {
    this.columns = new TraceColumnsBuilder(Math.ceil(pickleBytes / 40), details);
  }

  /** Called by the reader on each window of its input. */
  attach(b: Uint8Array, view: DataView, memo: PickleMemo, strings: StringCache, soft: number): void {
    this.b = b;
    this.view = view;
    this.memo = memo;
    this.rowIndex = memo.share(ROW_STAND_IN);
    this.skippedIndices = SKIPPED_STAND_INS.map((v) => memo.share(v));
    this.strings = strings;
    this.soft = soft;
  }

  /**
   * Reads the entry whose EMPTY_DICT is at `at - 1` and those that follow it at once (a batch of a
   * list holds up to 1000): the reader's own loop then turns about once per batch, not per entry.
   * Returns the position after the last one read (lastCount says how many), or -1 with memo as it
   * was when the first is not an entry the fast path reads.
   */
  read(at: number): number {
    const memo = this.memo;
    const b = this.b;
    let count = 0;
    let end = -1;
    for (;;) {
      const memoStart = memo.length;
      const next = this.entry(at);
      if (next < 0) {
        memo.truncate(memoStart);
        break;
      }
      count++;
      end = next;
      this.pos = next;
      this.skipFrames();
      if (b[this.pos] !== EMPTY_DICT || this.pos >= this.soft) break;
      at = this.pos + 1;
    }
    this.lastCount = count;
    return end;
  }

  /** The reader's APPEND/APPENDS of items[from, to) to `list`: values are pushed, stand-ins become runs. */
  append(list: PickleValue[], items: PickleValue[], from: number, to: number): void {
    let rows = 0;
    for (let i = from; i < to; i++) if (items[i] === ROW_STAND_IN) rows++;
    if (rows === 0) {
      for (let i = from; i < to; i++) list.push(items[i]!);
      return;
    }
    if (this.appended + rows !== this.columns.length) throw new FastPathUnusable();
    this.appended += rows;
    const runs = this.runs;
    for (let i = from; i < to; i++) {
      if (items[i] !== ROW_STAND_IN) {
        list.push(items[i]!);
        continue;
      }
      let count = 1;
      while (i + 1 < to && items[i + 1] === ROW_STAND_IN) {
        count++;
        i++;
      }
      const last = runs[runs.length - 1];
      if (last && last.list === list && last.at === list.length) last.count += count;
      else runs.push({ list, at: list.length, count });
    }
  }

  private entry(at: number): number {
    const b = this.b;
    if (b[at] !== MEMOIZE || b[at + 1] !== MARK) return -1;
    this.pos = at + 2;
    this.memo.pushIndex(this.rowIndex);
    if (!this.key('action')) return -1;
    const code = actionCode(this.value());
    if (code < 0) return -1;
    // An oom has device_free where the others have addr (the column keeps it there, as PyTorch's
    // TraceEntry does): read as a row too, a real OOM dump's trace stays one run of rows, not copied.
    const keyAt = this.pos;
    const memoAt = this.memo.length;
    if (!this.key('addr')) {
      this.pos = keyAt;
      this.memo.truncate(memoAt);
      if (code !== Action.oom || !this.key('device_free')) return -1;
    }
    // A negative address or size is read the slow way, whose checks refuse it with the entry named.
    const addr = this.int();
    if (!(addr >= 0) || !this.key('size')) return -1;
    const size = this.int();
    if (!(size >= 0 && (size <= MAX_RECORDABLE_BYTES || code === Action.oom)) || !this.key('stream')) return -1;
    const stream = this.int();
    if (Number.isNaN(stream) || !this.key('time_us')) return -1;
    let time = NaN;
    if (this.details) {
      const t = this.value();
      if (typeof t === 'number') time = t;
      else if (typeof t === 'bigint') time = Number(t);
      else return -1;
    } else if (!this.time()) return -1; // a replay never reads the time: any number will do, unread
    if (!this.key('compile_context')) return -1;
    const compileContext = this.value();
    if (typeof compileContext !== 'string' || !this.key('user_metadata')) return -1;
    const userMetadata = this.value();
    if (typeof userMetadata !== 'string') return -1;
    this.skipFrames();
    let flags = 0;
    this.entryList = -1;
    if (b[this.pos] !== SETITEMS) {
      const frames = this.key('frames') ? this.frames() : -1;
      if (frames < 0) return -1;
      if (frames > 0) flags = entryFlags(code, frames);
      this.skipFrames();
      if (b[this.pos] !== SETITEMS) return -1;
    }
    this.columns.push(code, addr, size, stream, flags);
    if (this.details) this.columns.pushDetails(time, this.entryList, compileContext, userMetadata);
    return this.pos + 1;
  }

  /** Reads the key `name`. Keys are nearly always memo references: those are tested inline. */
  private key(name: string): boolean {
    const b = this.b;
    const p = this.pos;
    const op = b[p];
    if (op === BINGET && p + 2 <= b.length && this.memo.get(b[p + 1]!) === name) {
      this.pos = p + 2;
      return true;
    }
    if (op === LONG_BINGET && p + 5 <= b.length && this.memo.get(this.view.getUint32(p + 1, true)) === name) {
      this.pos = p + 5;
      return true;
    }
    return this.value() === name;
  }

  /** An integer value, NaN for anything else; the common small ones and addresses read inline. */
  private int(): number {
    const b = this.b;
    const p = this.pos;
    const op = b[p];
    if (op === BININT1 && p + 2 <= b.length) {
      this.pos = p + 2;
      return b[p + 1]!;
    }
    if (op === LONG1 && p + 2 <= b.length && b[p + 1]! <= 6 && p + 2 + b[p + 1]! <= b.length) {
      const len = b[p + 1]!;
      this.pos = p + 2 + len;
      return decodeLong(b, p + 2, len) as number; // 6 bytes or fewer: always a safe integer
    }
    const v = this.value();
    return isInt(v) ? v : NaN;
  }

  /**
   * A frame list: a memo reference, or a new list of frame dicts. Checks it and keeps nothing but
   * its frames' marks (frameMarks, together): -1 not a frame list.
   */
  private frames(): number {
    const b = this.b;
    this.skipFrames();
    if (b[this.pos] !== EMPTY_LIST) {
      const v = this.value();
      const skipped = SKIPPED_STAND_INS.indexOf(v as PickleValue);
      if (skipped >= 0) return skipped;
      if (v instanceof FastPathStandIn) {
        // A list read before, with details: its index and marks.
        this.entryList = v.index;
        return v.mark;
      }
      if (!Array.isArray(v) || !v.every(isFrame)) return -1;
      let marks = 0;
      for (const f of v) marks |= frameMarks((f as Record<string, PickleValue>).name as string);
      if (this.details) {
        // One the generic reader made (its first use was in a dict the fast path left alone).
        const frames = v as unknown as Frame[];
        for (const f of frames) this.normalizeLine(f);
        this.entryList = this.columns.frameListIndex(frames);
      }
      return marks;
    }
    this.pos++;
    let slot = -1;
    if (b[this.pos] === MEMOIZE) {
      slot = this.memo.length;
      this.memo.pushIndex(this.skippedIndices[0]!);
      this.pos++;
    }
    this.marksSeen = 0;
    this.collecting = this.details;
    this.listLength = 0;
    // Lists come as MARK items APPENDS (in batches of 1000), one item and APPEND, or nothing.
    for (;;) {
      this.skipFrames();
      const op = b[this.pos];
      if (op === MARK) {
        this.pos++;
        for (;;) {
          this.skipFrames();
          if (b[this.pos] === APPENDS) break;
          if (!this.frame()) return -1;
        }
        this.pos++;
      } else if (op === EMPTY_DICT || op === BINGET || op === LONG_BINGET) {
        if (!this.frame()) return -1;
        this.skipFrames();
        if (b[this.pos] !== APPEND) return -1;
        this.pos++;
      } else {
        return this.endList(slot);
      }
    }
  }

  /** A new list read to its end (its memo slot `slot`, -1 if none): its marks. */
  private endList(slot: number): number {
    const marks = this.marksSeen;
    if (this.collecting) {
      // The list is kept interned (torch writes one per entry, of shared frames); the memo keeps its
      // index, in one stand-in per interned list and mark (most lists repeat one read before).
      this.collecting = false;
      const k = this.columns.internFrames(this.listFrames, this.listIds, this.listLength);
      this.entryList = k;
      if (slot >= 0) this.memo.setIndex(slot, (this.standIns[4 * k + marks] ??= this.memo.share(new FastPathStandIn(k, marks) as unknown as PickleValue)));
    } else if (marks && slot >= 0) this.memo.setIndex(slot, this.skippedIndices[marks]!);
    return marks;
  }

  /** A line past 2^53 (PyTorch's unknown line) as UNKNOWN_LINE, as the checks read it. */
  private normalizeLine(f: Frame): void {
    const line = f.line as unknown;
    if (typeof line === 'bigint' || !Number.isSafeInteger(line)) {
      f.line = UNKNOWN_LINE;
      this.unknownLines++;
    }
  }

  /** One frame: a memo reference to a frame dict, or a new {name, filename, line}. */
  private frame(): boolean {
    const b = this.b;
    if (b[this.pos] !== EMPTY_DICT) {
      // A memo reference (the frames' callers call skipFrames first): its slot tells the frame apart.
      const p = this.pos;
      let ref: number;
      if (b[p] === BINGET && p + 2 <= b.length) {
        ref = b[p + 1]!;
        this.pos = p + 2;
      } else if (b[p] === LONG_BINGET && p + 5 <= b.length) {
        ref = this.view.getUint32(p + 1, true);
        this.pos = p + 5;
      } else return false;
      const v: Read = ref < this.memo.length ? this.memo.get(ref)! : NO;
      if (!isFrame(v)) return false;
      this.marksSeen |= frameMarks((v as Record<string, PickleValue>).name as string);
      if (this.collecting) {
        this.normalizeLine(v as unknown as Frame);
        this.listFrames[this.listLength] = v as unknown as Frame;
        this.listIds[this.listLength++] = ref;
      }
      return true;
    }
    if (b[this.pos + 1] !== MEMOIZE || b[this.pos + 2] !== MARK) return false;
    this.pos += 3;
    const memo = this.memo;
    const slot = memo.length;
    // Its slot holds None until the frame is read (set() then stores the frame): a placeholder shared
    // by every frame, not a value of its own.
    memo.pushIndex(memo.share(null));
    if (this.value() !== 'name') return false;
    const name = this.value();
    if (this.value() !== 'filename') return false;
    const filename = this.value();
    if (this.value() !== 'line') return false;
    const line = this.value();
    this.skipFrames();
    if (typeof name !== 'string' || typeof filename !== 'string' || !isLine(line) || b[this.pos] !== SETITEMS) {
      return false;
    }
    this.pos++;
    const frame = { name, filename, line: line as PickleValue };
    memo.set(slot, frame);
    this.marksSeen |= frameMarks(name);
    if (this.collecting) {
      this.normalizeLine(frame as unknown as Frame);
      this.listFrames[this.listLength] = frame as unknown as Frame;
      this.listIds[this.listLength++] = slot;
    }
    return true;
  }

  /** Skips a number without decoding it; false for anything else. */
  private time(): boolean {
    this.skipFrames();
    const b = this.b;
    const p = this.pos;
    const op = b[p];
    const len = op === BININT1 ? 2 : op === BININT2 ? 3 : op === BININT ? 5 : op === BINFLOAT ? 9 : op === LONG1 ? 2 + b[p + 1]! : 0;
    if (len === 0 || !(p + len <= b.length)) return false;
    this.pos = p + len;
    return true;
  }

  /** Skips protocol 4 FRAME opcodes (they may come between any two objects). */
  private skipFrames(): void {
    const b = this.b;
    // A FRAME that claims more bytes than are left stays put: the generic reader reports it.
    while (b[this.pos] === FRAME && this.pos + 9 <= b.length) {
      const len = this.view.getUint32(this.pos + 1, true) + this.view.getUint32(this.pos + 5, true) * 4294967296;
      if (len > b.length - this.pos - 9) return;
      this.pos += 9;
    }
  }

  /**
   * One scalar or memo reference, with the MEMOIZE that may follow a string; NO for any other
   * opcode, and for operands that run past the end (the generic reader reports those).
   */
  private value(): Read {
    this.skipFrames();
    const b = this.b;
    const p = this.pos;
    const n = b.length;
    const memo = this.memo;
    switch (b[p]) {
      case BINGET: {
        if (p + 2 > n) return NO;
        const i = b[p + 1]!;
        this.pos = p + 2;
        return i < memo.length ? memo.get(i)! : NO;
      }
      case LONG_BINGET: {
        if (p + 5 > n) return NO;
        const i = this.view.getUint32(p + 1, true);
        this.pos = p + 5;
        return i < memo.length ? memo.get(i)! : NO;
      }
      case SHORT_BINUNICODE: {
        if (p + 2 > n) return NO;
        const len = b[p + 1]!;
        if (p + 2 + len > n) return NO;
        const s = this.strings.get(p + 2, len);
        this.pos = p + 2 + len;
        if (b[this.pos] === MEMOIZE) {
          memo.pushString(s);
          this.pos++;
        }
        return s;
      }
      case BININT1:
        if (p + 2 > n) return NO;
        this.pos = p + 2;
        return b[p + 1]!;
      case BININT2:
        if (p + 3 > n) return NO;
        this.pos = p + 3;
        return b[p + 1]! | (b[p + 2]! << 8);
      case BININT:
        if (p + 5 > n) return NO;
        this.pos = p + 5;
        return this.view.getInt32(p + 1, true);
      case LONG1: {
        if (p + 2 > n) return NO;
        const len = b[p + 1]!;
        if (p + 2 + len > n) return NO;
        // A bigint (past 2^53) is read too: only int() insists on an exact number.
        const v = decodeLong(b, p + 2, len);
        this.pos = p + 2 + len;
        return v;
      }
      case BINFLOAT:
        if (p + 9 > n) return NO;
        this.pos = p + 9;
        return this.view.getFloat64(p + 1, false);
      default:
        return NO;
    }
  }
}
