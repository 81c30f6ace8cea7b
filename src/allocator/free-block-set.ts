// The cached free blocks of one pool, ordered as PyTorch's BlockComparatorSize: (stream, size, address).
//
// A sorted list of short sorted chunks (as Python's sortedcontainers does): a lookup is two binary
// searches, an update a shift within one chunk, so every operation costs O(log n + chunk) and
// allocates nothing. `npm run bench` compares it with @js-sdsl/ordered-set (red-black tree) and
// sorted-btree (B+ tree) on real traces, where free sets hold tens to a few hundred blocks.
import type { Block } from './block';

/** <0, 0, >0 as (stream, size, addr) orders before, equal to, after block b. */
function compareKey(stream: number, size: number, addr: number, b: Block): number {
  return stream - b.stream || size - b.size || addr - b.addr;
}

/** What the allocator needs of an ordered set of free blocks. */
export interface OrderedFreeBlocks {
  readonly size: number;
  insert(block: Block): void;
  delete(block: Block): void;
  lowerBound(stream: number, size: number): Block | undefined;
  lastBefore(stream: number, size: number): Block | undefined;
  previous(block: Block): Block | undefined;
  largest(): number;
  toArray(): Block[];
}

export class FreeBlockSet implements OrderedFreeBlocks {
  private chunks: Block[][] = [];
  private count = 0;
  /** Where the last lowerBound found its block (-1: unknown). Any insert or delete clears it. */
  private foundChunk = -1;
  private foundIndex = 0;

  /** `chunk`: the target chunk length (chunks split at twice that); 32 measured best on real traces. */
  constructor(private readonly chunk = 32) {}

  get size(): number {
    return this.count;
  }

  insert(block: Block): void {
    this.foundChunk = -1;
    const chunks = this.chunks;
    if (chunks.length === 0) {
      chunks.push([block]);
      this.count = 1;
      return;
    }
    let c = this.chunkFor(block.stream, block.size, block.addr);
    if (c === chunks.length) c--; // beyond every element: append to the last chunk
    const chunk = chunks[c]!;
    const at = lowerIndex(chunk, block.stream, block.size, block.addr);
    // Shift by hand: splice allocates its result array on every call.
    chunk.push(block);
    for (let i = chunk.length - 1; i > at; i--) chunk[i] = chunk[i - 1]!;
    chunk[at] = block;
    this.count++;
    if (chunk.length > 2 * this.chunk) chunks.splice(c + 1, 0, chunk.splice(this.chunk));
  }

  delete(block: Block): void {
    // The allocator usually deletes the block a lowerBound just found: skip the search then.
    let c = this.foundChunk;
    let i = this.foundIndex;
    // Test c first: chunks[-1] is a named-property lookup, many times slower than an index.
    let chunk = c >= 0 ? this.chunks[c] : undefined;
    if (!chunk || chunk[i] !== block) {
      c = this.chunkFor(block.stream, block.size, block.addr);
      chunk = this.chunks[c];
      if (!chunk) return;
      i = lowerIndex(chunk, block.stream, block.size, block.addr);
      if (chunk[i] !== block) return;
    }
    for (let j = i + 1; j < chunk.length; j++) chunk[j - 1] = chunk[j]!;
    chunk.pop();
    this.count--;
    this.foundChunk = -1;
    if (chunk.length === 0) this.chunks.splice(c, 1);
  }

  /** The first block ordered at or after (stream, size, address 0). */
  lowerBound(stream: number, size: number): Block | undefined {
    const c = this.chunkFor(stream, size, 0);
    const chunk = this.chunks[c];
    if (!chunk) return undefined;
    const i = lowerIndex(chunk, stream, size, 0);
    this.foundChunk = c;
    this.foundIndex = i;
    return chunk[i];
  }

  /** The last block ordered before (stream, size, address 0). */
  lastBefore(stream: number, size: number): Block | undefined {
    return this.before(stream, size, 0);
  }

  /** The block ordered just before `block`. */
  previous(block: Block): Block | undefined {
    return this.before(block.stream, block.size, block.addr);
  }

  /** Size of the largest block on any stream (0 when empty): the last block of each stream's run. */
  largest(): number {
    let largest = 0;
    for (const chunk of this.chunks) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        const next = chunk[i + 1];
        if ((!next || next.stream !== b.stream) && b.size > largest) largest = b.size;
      }
    }
    return largest;
  }

  /** All blocks in order, as a copy (safe to release while walking it). */
  toArray(): Block[] {
    return this.chunks.flat();
  }

  /** Index of the first chunk whose last element is >= the key (chunks.length if none). */
  private chunkFor(stream: number, size: number, addr: number): number {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid]!;
      if (compareKey(stream, size, addr, chunk[chunk.length - 1]!) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private before(stream: number, size: number, addr: number): Block | undefined {
    const c = this.chunkFor(stream, size, addr);
    const chunk = this.chunks[c];
    const i = chunk ? lowerIndex(chunk, stream, size, addr) : 0;
    if (chunk && i > 0) return chunk[i - 1];
    const previous = this.chunks[c - 1];
    return previous ? previous[previous.length - 1] : undefined;
  }
}

/** Index of the first block in `chunk` ordered at or after the key. */
function lowerIndex(chunk: Block[], stream: number, size: number, addr: number): number {
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKey(stream, size, addr, chunk[mid]!) > 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
