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
  const pieces: number[] = []; // [physStart, physEnd) pairs
  const end = offset + size;
  for (let o = offset; o < end; ) {
    const k = Math.floor(o / FRAME_BYTES);
    // A page the device had no frame for (it ran out): the block gets no words there.
    if (!(frames[k]! >= 0)) return NO_CHUNKS;
    const frameEnd = Math.min(end, (k + 1) * FRAME_BYTES);
    const phys = frames[k]! * FRAME_BYTES + (o - k * FRAME_BYTES);
    const physEnd = phys + (frameEnd - o);
    if (pieces.length > 0 && pieces[pieces.length - 1] === phys) pieces[pieces.length - 1] = physEnd;
    else pieces.push(phys, physEnd);
    o = frameEnd;
  }
  const out: number[] = [];
  let first = 0;
  for (let p = 0; p < pieces.length; p += 2) {
    const w0 = layout.wordAt(pieces[p]!);
    const w1 = layout.wordAt(pieces[p + 1]!);
    for (let w = w0; w < w1; w += CHUNK_WORDS) {
      const count = Math.min(CHUNK_WORDS, w1 - w);
      out.push(w, count, tag, first);
      first += count;
    }
  }
  return out.length === 0 ? NO_CHUNKS : out;
}
