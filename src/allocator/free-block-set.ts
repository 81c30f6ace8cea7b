// The cached free blocks of one pool, ordered as PyTorch's BlockComparatorSize: (stream, size, address).
//
// A sorted list of short sorted chunks (as Python's sortedcontainers does): a lookup is a binary
// search over the chunks and a scan of one, an update a shift within one chunk, so every operation
// costs O(log n + chunk) and allocates nothing. `npm run bench` compares it with @js-sdsl/ordered-set (red-black tree) and
// sorted-btree (B+ tree) on real traces, where free sets hold tens to a few hundred blocks.
import type { Block } from './block';

// Comparisons, not a three-way difference (stream - b.stream || ...): the searches below run them
// most, and a chain of subtractions tests each double for 0 and NaN on the way.

/** Whether (stream, size, addr) orders after block b. */
function keyAfter(stream: number, size: number, addr: number, b: Block): boolean {
  if (stream !== b.stream) return stream > b.stream;
  if (size !== b.size) return size > b.size;
  return addr > b.addr;
}

/** Whether (stream, size, addr) orders before block b. */
function keyBefore(stream: number, size: number, addr: number, b: Block): boolean {
  if (stream !== b.stream) return stream < b.stream;
  if (size !== b.size) return size < b.size;
  return addr < b.addr;
}

/** What the allocator needs of an ordered set of free blocks. */
export interface OrderedFreeBlocks {
  readonly size: number;
  insert(block: Block): void;
  delete(block: Block): void;
  /** A split: `block`, in the set, gives its first `bytes` away (addr += bytes, size -= bytes). */
  shrinkFront(block: Block, bytes: number): void;
  /** A merge: `block`, not in the set and now ordered after `old`, takes the place of `old`, which leaves. */
  replace(old: Block, block: Block): void;
  lowerBound(stream: number, size: number): Block | undefined;
  lastBefore(stream: number, size: number): Block | undefined;
  previous(block: Block): Block | undefined;
  /** The block ordered just after `block`, which is in the set. */
  next(block: Block): Block | undefined;
  largest(): number;
  toArray(): Block[];
}

export class FreeBlockSet implements OrderedFreeBlocks {
  private chunks: Block[][] = [];
  private count = 0;
  /** Where the last lowerBound found its block (-1: unknown). Any insert or delete clears it. */
  private foundChunk = -1;
  private foundIndex = 0;

  /** `chunk`: the target chunk length (chunks split at twice that). 16 measured best on the bench's traces (free sets of
   * 16-256 blocks; 25 runs each, best: n150 52.4-53.4 ms against 55.2-55.8 at 32 and 59 at 64; random-s3 within 2%). */
  constructor(private readonly chunk = 16) {}

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
    const c = this.find(block);
    if (c >= 0) this.removeAt(c, this.foundIndex);
  }

  // Both moves below shift only the blocks between the old and the new place, usually a few
  // in one chunk, where a delete and an insert would each shift half a chunk and search again.

  shrinkFront(block: Block, bytes: number): void {
    const c = this.find(block);
    block.addr += bytes;
    block.size -= bytes;
    if (c < 0) return this.insert(block);
    const i = this.foundIndex;
    const chunk = this.chunks[c]!;
    // Its key only falls: it moves towards the front of its chunk (the blocks it passes shift back
    // as it goes), or into an earlier one.
    const { stream, size, addr } = block;
    let k = i;
    for (; k > 0 && keyBefore(stream, size, addr, chunk[k - 1]!); k--) chunk[k] = chunk[k - 1]!;
    chunk[k] = block;
    this.foundChunk = -1;
    const previous = k === 0 && c > 0 ? this.chunks[c - 1]! : undefined;
    if (previous && keyBefore(stream, size, addr, previous[previous.length - 1]!)) {
      this.removeAt(c, 0);
      this.insert(block);
    }
  }

  replace(old: Block, block: Block): void {
    const c = this.find(old);
    if (c < 0) return this.insert(block);
    const i = this.foundIndex;
    const chunk = this.chunks[c]!;
    // Its key is above old's: it moves towards the back of old's chunk, or into a later one.
    const last = chunk[chunk.length - 1]!;
    if (c < this.chunks.length - 1 && keyAfter(block.stream, block.size, block.addr, last)) {
      this.removeAt(c, i);
      return this.insert(block);
    }
    // The blocks it passes shift forward as it goes.
    const { stream, size, addr } = block;
    let k = i;
    for (; k + 1 < chunk.length && keyAfter(stream, size, addr, chunk[k + 1]!); k++) chunk[k] = chunk[k + 1]!;
    chunk[k] = block;
    this.foundChunk = -1;
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

  next(block: Block): Block | undefined {
    const c = this.find(block);
    if (c < 0) return undefined;
    const chunk = this.chunks[c]!;
    const i = this.foundIndex + 1;
    return i < chunk.length ? chunk[i] : this.chunks[c + 1]?.[0];
  }

  /**
   * Size of the largest block on any stream (0 when empty): the last block of each stream's run, found
   * from the end a search a stream. (A replay asks at each new peak of reserved memory: a walk over the
   * set there took half of train_gpt2-n150's replay at max_split_size_mb:20, 5k segments.)
   */
  largest(): number {
    let largest = 0;
    const end = this.chunks[this.chunks.length - 1];
    for (let b = end?.[end.length - 1]; b; b = this.before(b.stream, -Infinity, 0)) if (b.size > largest) largest = b.size;
    return largest;
  }

  /** All blocks in order, as a copy (safe to release while walking it). */
  toArray(): Block[] {
    return this.chunks.flat();
  }

  /** The chunk holding `block` (its index in foundIndex), -1 if none. */
  private find(block: Block): number {
    // The allocator usually takes the block a lowerBound just found: skip the search then.
    let c = this.foundChunk;
    let i = this.foundIndex;
    // Test c first: chunks[-1] is a named-property lookup, many times slower than an index.
    let chunk = c >= 0 ? this.chunks[c] : undefined;
    if (!chunk || chunk[i] !== block) {
      c = this.chunkFor(block.stream, block.size, block.addr);
      chunk = this.chunks[c];
      if (!chunk) return -1;
      // By identity: indexOf compares pointers and reads no block.
      i = chunk.indexOf(block);
      if (i < 0) return -1;
    }
    this.foundIndex = i;
    return c;
  }

  private removeAt(c: number, i: number): void {
    const chunk = this.chunks[c]!;
    for (let j = i + 1; j < chunk.length; j++) chunk[j - 1] = chunk[j]!;
    chunk.pop();
    this.count--;
    this.foundChunk = -1;
    if (chunk.length === 0) this.chunks.splice(c, 1);
  }

  /** Index of the first chunk whose last element is >= the key (chunks.length if none). */
  private chunkFor(stream: number, size: number, addr: number): number {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid]!;
      if (keyAfter(stream, size, addr, chunk[chunk.length - 1]!)) lo = mid + 1;
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

/**
 * Index of the first block in `chunk` ordered at or after the key. A scan, not a binary search: a
 * chunk holds at most 32 blocks, and a scan's branches are predictable where a binary search's are
 * not (2% faster replays on both bench traces, every one of 3 runs each).
 */
function lowerIndex(chunk: Block[], stream: number, size: number, addr: number): number {
  let i = 0;
  while (i < chunk.length && keyAfter(stream, size, addr, chunk[i]!)) i++;
  return i;
}
