// Which code holds the memory: the stack tree and the sites at a reference trace's peak against a
// grouping done here from the snapshot's own entries, and the tree's invariants.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Block } from '../../src/allocator/block';
import { Stat } from '../../src/allocator/stats';
import { allocationStacks, BEFORE_TRACE, stackMatcher } from '../../src/trace/measures/allocation-stacks';
import { bytesOverTime } from '../../src/trace/measures/bytes-over-time';
import { isNoiseFrame } from '../../src/trace/measures/frame-filter';
import { idsUnder, memoryByStack, nodeAtPath, NO_STACK, pathTo } from '../../src/trace/measures/memory-by-stack';
import { memoryLayout } from '../../src/trace/measures/memory-layout';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile, decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { FIXTURES } from '../conformance/reference-traces';

function atPeak(file: string) {
  const bytes = readFileSync(join(FIXTURES, file));
  const { snapshot, traces } = decodeSnapshotForReplay(bytes, { details: true });
  const full = replaySnapshot(snapshot, { trace: traces[0]! });
  const peak = full.result.atPeak.request;
  const { result, stream } = replaySnapshot(snapshot, { trace: traces[0]!, until: peak });
  const stacks = allocationStacks(stream, traces[0]!.details, snapshot);
  const tree = memoryByStack(memoryLayout(result.allocator, () => -1), stacks.stackOf);
  return { tree, result, stream, stacks, objects: decodeSnapshotFile(bytes), peak };
}

describe('memory by stack', () => {
  test('at the peak of train_gpt2-n12: the same top site and bytes as grouping the entries here', () => {
    const { tree, result, stream, objects } = atPeak('train_gpt2-n12__default.pickle.gz');
    // Independently: each live block's alloc entry, by its innermost frame that is not noise.
    const entries = objects.device_traces[0]!;
    const allocAt = new Map<number, number>();
    for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) allocAt.set(stream.id[i]!, stream.source[i]!);
    const bySite = new Map<string, number>();
    let live = 0;
    for (const segment of result.allocator.segments.values()) {
      for (let b: Block | null = segment.head; b; b = b.next) {
        if (!b.allocated || b.pending) continue;
        live += b.size;
        const frames = (entries[allocAt.get(b.tag)!]?.frames ?? []).filter((f) => !isNoiseFrame(f));
        const site = frames.length ? `${frames[0]!.name} ${frames[0]!.filename}:${frames[0]!.line}` : NO_STACK;
        bySite.set(site, (bySite.get(site) ?? 0) + b.size);
      }
    }
    const [topSite, topBytes] = [...bySite].sort((a, b) => b[1] - a[1])[0]!;
    expect(tree.sites[0]!.label).toBe(topSite);
    expect(tree.sites[0]!.bytes).toBe(topBytes);
    expect(tree.bytes[0]).toBe(live);
    expect(tree.bytes[0]).toBe(result.allocator.stats.current(Stat.allocated_bytes));
    expect(tree.sites.reduce((a, s) => a + s.bytes, 0)).toBe(live);
  });

  test('the tree: preorder ranges, children within parents, every live id under the root once', () => {
    const { tree } = atPeak('train_gpt2-n12__default.pickle.gz');
    const n = tree.label.length;
    expect(n).toBeGreaterThan(10);
    for (let k = 1; k < n; k++) {
      const p = tree.parent[k]!;
      expect(p).toBeLessThan(k);
      expect(tree.end[k]!).toBeLessThanOrEqual(tree.end[p]!);
      expect(tree.depth[k]).toBe(tree.depth[p]! + 1);
      expect(nodeAtPath(tree, pathTo(tree, k))).toBe(k);
    }
    for (let k = 0; k < n; k++) {
      let children = 0;
      for (let c = k + 1; c < tree.end[k]!; c = tree.end[c]!) children += tree.bytes[c]!;
      expect(children).toBeLessThanOrEqual(tree.bytes[k]!);
    }
    expect(idsUnder(tree, 0).size).toBe(tree.ids.length);
    expect(tree.blocks[0]).toBe(tree.ids.length);
    expect(nodeAtPath(tree, ['no such frame'])).toBe(-1);
  });

  test("a node's bytes over time, from every request's stack, at the peak equal the requested bytes of its blocks there", () => {
    const { tree, stream, stacks, peak, result } = atPeak('train_gpt2-n12__default.pickle.gz');
    for (const k of [1, tree.end[1]!, 2]) {
      if (k >= tree.label.length) continue;
      const ids = idsUnder(tree, k);
      const series = bytesOverTime(stream, stackMatcher(stacks, { path: pathTo(tree, k) }));
      let requested = 0;
      for (const segment of result.allocator.segments.values()) {
        for (let b: Block | null = segment.head; b; b = b.next) if (b.allocated && ids.has(b.tag)) requested += b.requestedSize;
      }
      expect(requested).toBeGreaterThan(0);
      expect(series[peak]).toBe(requested);
    }
  });

  test('a ring buffer: a block from before the recording that lives to the end takes the final snapshot stack', () => {
    const { tree, stream, stacks } = atPeak('real/ring__default.pickle.gz');
    const initial = stream.initialBlocks;
    expect(initial.length).toBeGreaterThan(0);
    const kept = initial.filter((b) => b.source === undefined);
    const freed = initial.filter((b) => b.source !== undefined);
    expect(kept.length).toBeGreaterThan(0);
    // Where the final snapshot keeps no stack for it either (allocated before history was on), it says so.
    const withStacks = kept.filter((b) => typeof stacks.stackOf(b.id) !== 'string');
    expect(withStacks.length).toBeGreaterThan(0);
    for (const b of kept) if (!withStacks.includes(b)) expect(stacks.stackOf(b.id)).toBe(BEFORE_TRACE);
    for (const b of freed) expect(stacks.stackOf(b.id)).toBe(BEFORE_TRACE);
    expect(tree.bytes[0]).toBeGreaterThan(0);
  });
});
