// Which code holds the memory at one moment: the live allocations grouped by their allocation stacks,
// as a tree from the outermost frame (the program's entry) to the innermost (where it allocated),
// noise frames folded (frame-filter.ts), and the same bytes by allocation site (the innermost frame).
import type { Frame } from '../snapshot/snapshot';
import { frameLabel, isNoiseFrame, isPythonFrame } from './frame-filter';
import { BlockState, type MemoryLayout } from './memory-layout';
import { byCodePoint } from '../../lib/by-code-point';

/** An allocation's stack (frames innermost first, as PyTorch records them), or why there is none. */
export type StackOf = (id: number) => readonly Frame[] | string;

export const NO_STACK = '(no stack recorded)';

export interface StackTree {
  /** Nodes in preorder, children by bytes (largest first); node 0 is the root: all live allocations. */
  label: string[];
  parent: Int32Array;
  /** One past the last node of each node's subtree: node k's descendants are k+1 .. end[k]-1. */
  end: Int32Array;
  depth: Int32Array;
  /** Bytes of the blocks allocated under each node (block sizes: what allocated_bytes counts). */
  bytes: Float64Array;
  blocks: Int32Array;
  /** Each live allocation's logical id and the node of its innermost frame. */
  ids: Int32Array;
  leaf: Int32Array;
  /** Allocation sites (the innermost frame shown), by bytes. */
  sites: AllocationSite[];
}

export interface AllocationSite {
  label: string;
  bytes: number;
  count: number;
  largest: number;
}

interface TrieNode {
  label: string;
  bytes: number;
  blocks: number;
  children: Map<string, TrieNode>;
  /** Ids of the allocations whose innermost frame this is. */
  ids: number[];
}

const trieNode = (label: string): TrieNode => ({ label, bytes: 0, blocks: 0, children: new Map(), ids: [] });

/** The stack, noise folded, as labels from the outermost frame in. */
export function stackPath(stack: readonly Frame[] | string): string[] {
  if (typeof stack === 'string') return [stack];
  const path: string[] = [];
  for (let i = stack.length - 1; i >= 0; i--) if (!isNoiseFrame(stack[i]!)) path.push(frameLabel(stack[i]!));
  return path.length > 0 ? path : [NO_STACK];
}

/** The allocation site a stack names: its innermost Python frame (the program's line) where it has one,
 * else its innermost frame shown (the op or autograd node that asked, on the autograd engine's thread):
 * the same site whether the recording has C++ frames or not. */
export function stackSite(stack: readonly Frame[] | string): string {
  if (typeof stack !== 'string') {
    for (const f of stack) if (isPythonFrame(f) && !isNoiseFrame(f)) return frameLabel(f);
  }
  return stackPath(stack).at(-1)!;
}

/** The allocated blocks of `layout` grouped by stack. */
export function memoryByStack(layout: MemoryLayout, stackOf: StackOf): StackTree {
  // Allocations that share a stack share its (interned) list: group by it first, walk the trie once per list.
  const groups = new Map<readonly Frame[] | string, { ids: number[]; bytes: number; largest: number }>();
  for (let b = 0; b < layout.blockState.length; b++) {
    if (layout.blockState[b] !== BlockState.allocated) continue;
    const id = layout.blockId[b]!;
    const stack = stackOf(id);
    let g = groups.get(stack);
    if (!g) groups.set(stack, (g = { ids: [], bytes: 0, largest: 0 }));
    const size = layout.blockSize[b]!;
    g.ids.push(id);
    g.bytes += size;
    if (size > g.largest) g.largest = size;
  }
  const root = trieNode('all live allocations');
  const sites = new Map<string, AllocationSite>();
  for (const [stack, g] of groups) {
    const path = stackPath(stack);
    const bytes = g.bytes;
    let node = root;
    node.bytes += bytes;
    node.blocks += g.ids.length;
    for (const label of path) {
      let child = node.children.get(label);
      if (!child) node.children.set(label, (child = trieNode(label)));
      child.bytes += bytes;
      child.blocks += g.ids.length;
      node = child;
    }
    // No spread: one stack may hold more blocks than a call's arguments can.
    for (const id of g.ids) node.ids.push(id);
    const label = stackSite(stack);
    let site = sites.get(label);
    if (!site) sites.set(label, (site = { label, bytes: 0, count: 0, largest: 0 }));
    site.bytes += bytes;
    site.count += g.ids.length;
    if (g.largest > site.largest) site.largest = g.largest;
  }
  return { ...flatten(root), sites: [...sites.values()].sort((a, b) => b.bytes - a.bytes || byCodePoint(a.label, b.label)) };
}

function flatten(root: TrieNode): Omit<StackTree, 'sites'> {
  const nodes: { node: TrieNode; parent: number; depth: number }[] = [];
  const endOf: number[] = [];
  const visit = (node: TrieNode, parent: number, depth: number): void => {
    const k = nodes.push({ node, parent, depth }) - 1;
    const children = [...node.children.values()].sort((a, b) => b.bytes - a.bytes || byCodePoint(a.label, b.label));
    for (const c of children) visit(c, k, depth + 1);
    endOf[k] = nodes.length;
  };
  visit(root, -1, 0);
  const n = nodes.length;
  const tree = {
    label: nodes.map((x) => x.node.label),
    parent: Int32Array.from(nodes, (x) => x.parent),
    end: Int32Array.from(endOf),
    depth: Int32Array.from(nodes, (x) => x.depth),
    bytes: Float64Array.from(nodes, (x) => x.node.bytes),
    blocks: Int32Array.from(nodes, (x) => x.node.blocks),
  };
  const count = nodes.reduce((a, x) => a + x.node.ids.length, 0);
  const ids = new Int32Array(count);
  const leaf = new Int32Array(count);
  let j = 0;
  for (let k = 0; k < n; k++) {
    for (const id of nodes[k]!.node.ids) {
      ids[j] = id;
      leaf[j++] = k;
    }
  }
  return { ...tree, ids, leaf };
}

/** The logical ids of the allocations under node `k`. */
export function idsUnder(tree: StackTree, k: number): Set<number> {
  const out = new Set<number>();
  const end = tree.end[k]!;
  for (let j = 0; j < tree.ids.length; j++) {
    const l = tree.leaf[j]!;
    if (l >= k && l < end) out.add(tree.ids[j]!);
  }
  return out;
}

/** The node whose path of labels from the root is `path` (a selection kept across cursor moves), or -1. */
export function nodeAtPath(tree: StackTree, path: readonly string[]): number {
  let k = 0;
  for (const label of path) {
    let c = k + 1;
    while (c < tree.end[k]! && tree.label[c] !== label) c = tree.end[c]!;
    if (c >= tree.end[k]!) return -1;
    k = c;
  }
  return k;
}

/** The labels from the root (left out) to node `k`. */
export function pathTo(tree: StackTree, k: number): string[] {
  const path: string[] = [];
  for (let n = k; n > 0; n = tree.parent[n]!) path.unshift(tree.label[n]!);
  return path;
}
