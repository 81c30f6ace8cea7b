// The table of every live span, kept from batch to batch: a block's spans are appended when it is
// allocated and blanked (start 0, count 0: the kernel checks no word) when it is freed, and the
// table is compacted once half of it is blank. Rebuilding it from every live block each batch cost
// more than the allocator itself (5,000 blocks at the benchmark's peak).
//
// Each batch verifies a share of it (`sweep`), in rounds of SWEEP_BATCHES batches: a round covers the
// entries the table held when it began, 1/SWEEP_BATCHES of them a batch; entries added meanwhile wait
// for the next round. So a live block is read again at most 2 x SWEEP_BATCHES batches after it was
// written or last read, however the table grows. Reading all of it after every batch moved ~300 MiB
// a batch at the benchmark's peak: more than the H200's memory can move in the time the allocator
// takes for the batch (bench/gpu/gpu-floor.ts).
import { SPAN_U32S } from './block-spans';

/** Batches a sweep takes to go round the whole table once. */
export const SWEEP_BATCHES = 8;

export class VerifyTable {
  private table = new Uint32Array(64 * SPAN_U32S);
  /** The other table compaction writes into, in turn. */
  private spare = new Uint32Array(0);
  /** Entries in use, blank ones included. */
  private used = 0;
  private blank = 0;
  /** The entry the next sweep starts at, the end of the round's entries, and its share a batch. */
  private cursor = 0;
  private roundEnd = 0;
  private share = 0;

  /** Appends a block's spans; returns where they start (an entry index). */
  add(spans: readonly number[]): number {
    const at = this.used;
    const n = spans.length / SPAN_U32S;
    if ((at + n) * SPAN_U32S > this.table.length) {
      const grown = new Uint32Array(Math.max(2 * this.table.length, (at + n) * SPAN_U32S));
      grown.set(this.table.subarray(0, at * SPAN_U32S));
      this.table = grown;
    }
    const table = this.table;
    for (let i = 0, j = at * SPAN_U32S; i < spans.length; i++, j++) table[j] = spans[i]!;
    this.used += n;
    return at;
  }

  /** Blanks the `n` entries from `at` (a block's, freed). */
  remove(at: number, n: number): void {
    this.table.fill(0, at * SPAN_U32S, (at + n) * SPAN_U32S);
    this.blank += n;
  }

  /** Whether blank entries make up half the table: time to compact. */
  get sparse(): boolean {
    return this.blank > 64 && 2 * this.blank > this.used;
  }

  /**
   * Drops the blank entries: lays out `blocks` (every live block, in the order they were added)
   * anew, setting each one's `entry`; the round goes on from the same block.
   */
  compact(blocks: Iterable<{ entry: number; readonly spans: readonly number[] }>): void {
    // Into the table the last compaction left (what it holds past `used` is never read).
    const old = this.table;
    this.table = this.spare.length >= old.length ? this.spare : new Uint32Array(old.length);
    this.spare = old;
    this.used = 0;
    this.blank = 0;
    let [cursor, roundEnd] = [0, 0];
    for (const b of blocks) {
      if (b.spans.length === 0) {
        b.entry = -1;
        continue;
      }
      // Entries keep their order: count those that stood before each mark (a mark may fall inside a block).
      const n = b.spans.length / SPAN_U32S;
      cursor += Math.max(0, Math.min(n, this.cursor - b.entry));
      roundEnd += Math.max(0, Math.min(n, this.roundEnd - b.entry));
      b.entry = this.add(b.spans);
    }
    [this.cursor, this.roundEnd] = [cursor, roundEnd];
  }

  /** The table as it stands, a copy (a plan may be kept while later batches change the table). */
  entries(): Uint32Array<ArrayBuffer> {
    return this.table.slice(0, this.used * SPAN_U32S);
  }

  /** The next share of the table for a batch to verify (a copy). */
  sweep(): Uint32Array<ArrayBuffer> {
    if (this.cursor >= this.roundEnd) {
      // A new round: the entries there are now.
      this.cursor = 0;
      this.roundEnd = this.used;
      this.share = Math.ceil(this.used / SWEEP_BATCHES);
    }
    const from = this.cursor;
    this.cursor = Math.min(this.roundEnd, from + this.share);
    return this.table.slice(from * SPAN_U32S, this.cursor * SPAN_U32S);
  }
}
