// The unpickler's memo: what MEMOIZE and PUT stored, by index. A snapshot memoizes a few things per trace
// entry that only stand-ins take the place of (the fast path keeps the entry in columns), so a 1 GB
// file has some 25 million memo entries and only thousands of distinct values. The entries are indices
// into those values, in a typed array: as one JS array of values they made a heap of 200 MB that every
// full collection walked (in Node, 3.3 s of a 1 GB file's 8.6 s parse went to the GC), and the 16 MiB
// slices a file is read in ask for many such collections.
import type { PickleValue } from './pickle-value';

export class PickleMemo {
  /** Per memo entry, its value's index in `values`. */
  private slots = new Int32Array(1 << 12);
  private count = 0;
  private readonly values: PickleValue[] = [];
  /** Values stored once for any number of entries (stand-ins, strings), by value. */
  private readonly shared = new Map<PickleValue, number>();
  /** The string pushString stored last, and its index: the next is most often the same. */
  private lastString = '';
  private lastStringIndex = -1;

  get length(): number {
    return this.count;
  }

  /** How many values the entries hold between them. */
  get distinct(): number {
    return this.values.length;
  }

  /** Forgets the entries from `length` on: a read that stored them was rewound. */
  truncate(length: number): void {
    if (length < this.count) this.count = length;
  }

  /** Entry i; undefined where none is stored. */
  get(i: number): PickleValue | undefined {
    return i < this.count ? this.values[this.slots[i]!] : undefined;
  }

  /** Stores `v` as the next entry. */
  push(v: PickleValue): void {
    this.pushIndex(this.values.push(v) - 1);
  }

  /**
   * Stores a string as the next entry, each text once: torch writes a new str object, so a new memo
   * entry, for a trace entry's compile_context ("N/A") every time.
   */
  pushString(s: string): void {
    if (s !== this.lastString || this.lastStringIndex < 0) {
      this.lastString = s;
      this.lastStringIndex = this.share(s);
    }
    this.pushIndex(this.lastStringIndex);
  }

  /** Replaces entry i (i < length). */
  set(i: number, v: PickleValue): void {
    this.slots[i] = this.values.push(v) - 1;
  }

  /**
   * The index of `v` as a value stored once for any number of entries (a stand-in), for pushIndex and
   * setIndex: a caller that stores it per trace entry keeps the index, not a lookup per entry.
   */
  share(v: PickleValue): number {
    let k = this.shared.get(v);
    if (k === undefined) this.shared.set(v, (k = this.values.push(v) - 1));
    return k;
  }

  /** Stores the shared value `k` as the next entry. */
  pushIndex(k: number): void {
    if (this.count === this.slots.length) {
      const grown = new Int32Array(this.slots.length * 2);
      grown.set(this.slots);
      this.slots = grown;
    }
    this.slots[this.count++] = k;
  }

  /** Replaces entry i (i < length) with the shared value `k`. */
  setIndex(i: number, k: number): void {
    this.slots[i] = k;
  }
}
