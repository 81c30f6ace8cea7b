// A block's words in the arena, as chunks of at most CHUNK_WORDS: one GPU workgroup per chunk, so
// kernels spread big blocks over many workgroups and small ones cost one. Each chunk is four u32s,
// the WGSL `Chunk` of shaders/arena.wgsl: arena start word, word count, block tag, and the index of
// its first word within the block (the fill pattern depends on it).
import type { ArenaLayout } from './arena-layout';
import { FRAME_BYTES } from '../../allocator/placement/physical-frames';

export const CHUNK_WORDS = 65536;
export const CHUNK_U32S = 4;

/** A block with no words (shared: a scaled arena has thousands of them). */
export const NO_CHUNKS: readonly number[] = Object.freeze([]);

/**
 * Chunks for the block at byte `offset` of a segment mapped onto `frames`, `size` bytes long.
 * Pieces on physically adjacent frames merge before rounding to words, so the split into frames
 * leaves no gaps in a contiguous block. A plain array: a typed array per block cost more to make
 * than the rest of the batch's planning.
 */
export function blockChunks(
  layout: ArenaLayout,
  frames: Int32Array,
  offset: number,
  size: number,
  tag: number,
): readonly number[] {
  if (size <= 0) return NO_CHUNKS;
  const out: number[] = [];
  let first = 0;
  // The run of physically adjacent frames being gathered: [runStart, runEnd) bytes.
  let runStart = -1;
  let runEnd = -1;
  const end = offset + size;
  // Frame by frame (a 1 GiB block spans 512), without a division each.
  const k0 = Math.floor(offset / FRAME_BYTES);
  const k1 = Math.floor((end - 1) / FRAME_BYTES);
  for (let k = k0; k <= k1; k++) {
    const frame = frames[k]!;
    // A page the device had no frame for (it ran out): the block gets no words there.
    if (!(frame >= 0)) return NO_CHUNKS;
    const base = frame * FRAME_BYTES;
    const phys = base + (k === k0 ? offset - k * FRAME_BYTES : 0);
    if (phys !== runEnd) {
      if (runStart >= 0) first = pushRun(out, layout, runStart, runEnd, tag, first);
      runStart = phys;
    }
    runEnd = base + (k === k1 ? end - k * FRAME_BYTES : FRAME_BYTES);
  }
  if (runStart >= 0) pushRun(out, layout, runStart, runEnd, tag, first);
  return out.length === 0 ? NO_CHUNKS : out;
}

/** Appends the chunks of physical bytes [start, end) to `out`; returns the block word after them. */
function pushRun(out: number[], layout: ArenaLayout, start: number, end: number, tag: number, first: number): number {
  const w1 = layout.wordAt(end);
  for (let w = layout.wordAt(start); w < w1; w += CHUNK_WORDS) {
    const count = Math.min(CHUNK_WORDS, w1 - w);
    out.push(w, count, tag, first);
    first += count;
  }
  return first;
}
