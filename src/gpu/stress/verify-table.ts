// The verify kernel's table of every live chunk, kept from batch to batch: a block's chunks are
// appended when it is allocated and blanked (start 0, count 0: the kernel checks no word) when it
// is freed, and the table is compacted once half of it is blank. Rebuilding it from every live
// block each batch cost more than the allocator itself (5,000 blocks, 10,000 chunks at the
// benchmark's peak), so a stressed run did a tenth of the requests of an unstressed one.
import { CHUNK_U32S } from './block-chunks';

export class VerifyTable {
  private table = new Uint32Array(64 * CHUNK_U32S);
  /** Entries in use, blank ones included. */
  private used = 0;
  private blank = 0;

  /** Appends a block's chunks; returns where they start (an entry index). */
  add(chunks: readonly number[]): number {
    const at = this.used;
    const n = chunks.length / CHUNK_U32S;
    if ((at + n) * CHUNK_U32S > this.table.length) {
      const grown = new Uint32Array(Math.max(2 * this.table.length, (at + n) * CHUNK_U32S));
      grown.set(this.table.subarray(0, at * CHUNK_U32S));
      this.table = grown;
    }
    const table = this.table;
    for (let i = 0, j = at * CHUNK_U32S; i < chunks.length; i++, j++) table[j] = chunks[i]!;
    this.used += n;
    return at;
  }

  /** Blanks the `n` entries from `at` (a block's, freed). */
  remove(at: number, n: number): void {
    this.table.fill(0, at * CHUNK_U32S, (at + n) * CHUNK_U32S);
    this.blank += n;
  }

  /** Whether blank entries make up half the table: time to compact. */
  get sparse(): boolean {
    return this.blank > 64 && 2 * this.blank > this.used;
  }

  /** Starts over empty (compaction: the caller adds every live block again). */
  clear(): void {
    this.used = 0;
    this.blank = 0;
  }

  /** The table as it stands, a copy (a plan may be kept while later batches change the table). */
  entries(): Uint32Array<ArrayBuffer> {
    return this.table.slice(0, this.used * CHUNK_U32S);
  }
}
