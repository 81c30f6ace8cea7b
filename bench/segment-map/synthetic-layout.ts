// A large MemoryLayout made directly (no replay): the segment map's stress case, e.g. a million
// blocks in a few thousand segments over two streams and both pools. Seeded, so every run draws the same.
import { BlockState, emptyLayout, type MemoryLayout } from '../../src/trace/measures/memory-layout';
import { Prng } from '../../src/trace/stream/workloads/prng';

const MiB = 2 ** 20;

export function syntheticLayout(blocks: number, seed = 1): MemoryLayout {
  const rng = new Prng(seed);
  const maxSplitSize = 32 * MiB;
  // Large segments average ~400 blocks, small ones ~20; about 5% of the blocks in the small pool.
  const segs: { size: number; stream: number; small: boolean; parts: number }[] = [];
  let left = blocks;
  const smallBlocks = Math.floor(blocks * 0.05);
  while (left > smallBlocks) {
    const parts = Math.min(left - smallBlocks, rng.int(1, 800));
    // 20 MiB to ~200 MiB, more when many blocks need room (64 KiB each on average): ~100 GiB in all.
    const size = Math.ceil(Math.max(parts * 64 * 1024, rng.logUniform(20 * MiB, 200 * MiB)) / (2 * MiB)) * 2 * MiB;
    segs.push({ size, stream: rng.chance(0.7) ? 0 : 1, small: false, parts });
    left -= parts;
  }
  while (left > 0) {
    const parts = Math.min(left, rng.int(1, 40));
    segs.push({ size: 2 * MiB, stream: 0, small: true, parts });
    left -= parts;
  }
  segs.sort((a, b) => Number(a.small) - Number(b.small) || a.stream - b.stream);
  const n = segs.length;
  const layout = emptyLayout(n, blocks, maxSplitSize);
  let addr = 2 ** 40;
  let k = 0;
  segs.forEach((s, i) => {
    layout.segmentAddr[i] = addr;
    layout.segmentSize[i] = s.size;
    layout.segmentStream[i] = s.stream;
    layout.segmentSmall[i] = s.small ? 1 : 0;
    layout.segmentFirstBlock[i] = k;
    // Cut points at 512-byte multiples, sorted: the blocks tile the segment.
    const units = s.size / 512;
    const cuts = new Set<number>();
    while (cuts.size < s.parts - 1) cuts.add(rng.int(1, units - 1));
    const bounds = [0, ...[...cuts].sort((a, b) => a - b), units];
    const wholeFree = s.parts === 1 && rng.chance(0.3);
    for (let j = 0; j < s.parts; j++, k++) {
      const size = (bounds[j + 1]! - bounds[j]!) * 512;
      const state = wholeFree ? BlockState.freeSegment : rng.chance(0.6) ? BlockState.allocated : rng.chance(0.95) ? BlockState.cachedSplit : BlockState.pendingFree;
      layout.blockAddr[k] = addr + bounds[j]! * 512;
      layout.blockSize[k] = size;
      layout.blockState[k] = state;
      layout.blockRequested[k] = state === BlockState.allocated ? size - rng.int(0, 511) : 0;
      layout.blockOversize[k] = size >= maxSplitSize ? 1 : 0;
      layout.blockId[k] = state === BlockState.allocated ? k : -1;
      layout.blockSince[k] = state === BlockState.allocated ? rng.int(0, 100_000) : -1;
    }
    addr += Math.ceil(s.size / (32 * MiB)) * 32 * MiB;
  });
  return layout;
}
