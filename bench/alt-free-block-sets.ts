// The same ordered free-block set on two well-kept libraries, to compare with src/allocator/free-block-set.ts.
import { OrderedSet } from '@js-sdsl/ordered-set';
import BTreeModule from 'sorted-btree';
import { Block } from '../src/allocator/block';
import type { OrderedFreeBlocks } from '../src/allocator/free-block-set';

const BTree: typeof BTreeModule = (BTreeModule as unknown as { default?: typeof BTreeModule }).default ?? BTreeModule;

function compare(a: Block, b: Block): number {
  return a.stream - b.stream || a.size - b.size || a.addr - b.addr;
}

/** A reusable search key at (stream, size, address 0). */
function keyAt(key: Block, stream: number, size: number): Block {
  key.stream = stream;
  key.size = size;
  key.addr = 0;
  return key;
}

function largestOf(blocks: Block[]): number {
  let largest = 0;
  for (const b of blocks) if (b.size > largest) largest = b.size;
  return largest;
}

/** @js-sdsl/ordered-set: a red-black tree with STL-like lower_bound. */
export class SdslFreeBlocks implements OrderedFreeBlocks {
  private readonly set = new OrderedSet<Block>([], compare);
  private readonly key = new Block(0, 0, 0, false, null);
  get size(): number {
    return this.set.size();
  }
  insert(block: Block): void {
    this.set.insert(block);
  }
  delete(block: Block): void {
    this.set.eraseElementByKey(block);
  }
  shrinkFront(block: Block, bytes: number): void {
    this.delete(block);
    block.addr += bytes;
    block.size -= bytes;
    this.insert(block);
  }
  replace(old: Block, block: Block): void {
    this.delete(old);
    this.insert(block);
  }
  lowerBound(stream: number, size: number): Block | undefined {
    const it = this.set.lowerBound(keyAt(this.key, stream, size));
    return it.equals(this.set.end()) ? undefined : it.pointer;
  }
  lastBefore(stream: number, size: number): Block | undefined {
    const it = this.set.reverseUpperBound(keyAt(this.key, stream, size));
    return it.equals(this.set.rEnd()) ? undefined : it.pointer;
  }
  previous(block: Block): Block | undefined {
    const it = this.set.reverseUpperBound(block);
    return it.equals(this.set.rEnd()) ? undefined : it.pointer;
  }
  next(block: Block): Block | undefined {
    const it = this.set.upperBound(block);
    return it.equals(this.set.end()) ? undefined : it.pointer;
  }
  largest(): number {
    return largestOf(this.toArray());
  }
  toArray(): Block[] {
    const out: Block[] = [];
    this.set.forEach((b) => {
      out.push(b);
    });
    return out;
  }
}

/** sorted-btree: a B+ tree; result pairs reused so lookups do not allocate. */
export class BTreeFreeBlocks implements OrderedFreeBlocks {
  private readonly tree = new BTree<Block, undefined>(undefined, compare);
  private readonly key = new Block(0, 0, 0, false, null);
  private readonly pair: [Block, undefined] = [this.key, undefined];
  get size(): number {
    return this.tree.size;
  }
  insert(block: Block): void {
    this.tree.set(block, undefined);
  }
  delete(block: Block): void {
    this.tree.delete(block);
  }
  shrinkFront(block: Block, bytes: number): void {
    this.delete(block);
    block.addr += bytes;
    block.size -= bytes;
    this.insert(block);
  }
  replace(old: Block, block: Block): void {
    this.delete(old);
    this.insert(block);
  }
  lowerBound(stream: number, size: number): Block | undefined {
    return this.tree.getPairOrNextHigher(keyAt(this.key, stream, size), this.pair)?.[0];
  }
  lastBefore(stream: number, size: number): Block | undefined {
    return this.tree.nextLowerPair(keyAt(this.key, stream, size), this.pair)?.[0];
  }
  previous(block: Block): Block | undefined {
    return this.tree.nextLowerPair(block, this.pair)?.[0];
  }
  next(block: Block): Block | undefined {
    return this.tree.nextHigherPair(block, this.pair)?.[0];
  }
  largest(): number {
    return largestOf(this.toArray());
  }
  toArray(): Block[] {
    return this.tree.keysArray();
  }
}
