// A hook for callers that want one kind of object out of a pickle in another form than dicts (the
// snapshot reader puts trace entries straight into columns: snapshot/trace-rows.ts). The reader offers
// it each EMPTY_DICT; what it reads stands in the pickle's value as ROW_STAND_IN, and lists get the
// rows through append(). A stand-in used any other way (referenced twice, popped, duplicated) throws
// FastPathUnusable, and the caller reads the file again without the hook.
import type { PickleMemo } from './pickle-memo';
import type { PickleValue } from './pickle-value';
import type { StringCache } from './pickle-string-cache';

/** Stands in the pickle's value for an object the fast path read. */
export const ROW_STAND_IN: PickleValue = Object.freeze({ '\u0000fastPathRow': true });
/** Stand in the memo for a value the fast path checked and did not keep, by the marks (0-3) it found
 * in it (the trace rows: which frames a frame list has; 0, none). */
export const SKIPPED_STAND_INS: readonly PickleValue[] = [0, 1, 2, 3].map((mark) => Object.freeze({ '\u0000fastPathSkipped': mark }));

/** A fast path's own stand-in in the memo, carrying what it needs to know of the value there again. */
export class FastPathStandIn {
  constructor(
    readonly index: number,
    readonly mark: number,
  ) {
    Object.freeze(this);
  }
}

/** Whether `v` is one of the stand-ins, which only the fast path may read. */
export function isStandIn(v: PickleValue | undefined): boolean {
  const [s0, s1, s2, s3] = SKIPPED_STAND_INS;
  return v === ROW_STAND_IN || v === s0 || v === s1 || v === s2 || v === s3 || v instanceof FastPathStandIn;
}

/** A stand-in was used in a way the fast path cannot vouch for: read the file again without it. */
export class FastPathUnusable extends Error {}

export interface PickleFastPath {
  /**
   * Called by the reader as it starts on each window of the input, with the window, its memo and
   * string cache. Past `soft` the window may end within an object: read none that starts there.
   */
  attach(bytes: Uint8Array, view: DataView, memo: PickleMemo, strings: StringCache, soft: number): void;
  /**
   * At the EMPTY_DICT before `pos`: reads the objects that start there, returning the position after
   * them (lastCount says how many), or -1, with the memo as it was, when it reads none.
   */
  read(pos: number): number;
  readonly lastCount: number;
  /** The reader's APPEND/APPENDS of items[from, to) to `list`. */
  append(list: PickleValue[], items: PickleValue[], from: number, to: number): void;
}
