// A block's words in the arena, as spans: runs of words contiguous in the arena, one per run of
// physically adjacent frames (a block on contiguous frames, the usual case, is one span, however
// large). Each span is four u32s, the WGSL `Span` of shaders/arena.wgsl: arena start word, word
// count, block tag, and the index of its first word within the block (the fill pattern depends on
// it). Kernels split big spans over many workgroups and let small ones share one (work-groups.ts),
// so planning costs a few u32s a block whatever its size.
import type { ArenaLayout } from './arena-layout';
import { FRAME_BYTES } from '../../allocator/placement/physical-frames';

export const SPAN_U32S = 4;

/** A block with no words (shared: a scaled arena has thousands of them). */
export const NO_SPANS: readonly number[] = Object.freeze([]);

/**
 * Spans for the block at byte `offset` of a segment mapped onto `frames`, `size` bytes long.
 * Pieces on physically adjacent frames merge before rounding to words, so the split into frames
 * leaves no gaps in a contiguous block. A plain array: a typed array per block cost more to make
 * than the rest of the batch's planning.
 */
export function blockSpans(
  layout: ArenaLayout,
  frames: Int32Array,
  offset: number,
  size: number,
  tag: number,
): readonly number[] {
  if (size <= 0) return NO_SPANS;
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
    if (!(frame >= 0)) return NO_SPANS;
    const base = frame * FRAME_BYTES;
    const phys = base + (k === k0 ? offset - k * FRAME_BYTES : 0);
    if (phys !== runEnd) {
      if (runStart >= 0) first = pushSpan(out, layout, runStart, runEnd, tag, first);
      runStart = phys;
    }
    runEnd = base + (k === k1 ? end - k * FRAME_BYTES : FRAME_BYTES);
  }
  if (runStart >= 0) pushSpan(out, layout, runStart, runEnd, tag, first);
  return out.length === 0 ? NO_SPANS : out;
}

/** Appends the span of physical bytes [start, end), if it has words; returns the block word after it. */
function pushSpan(out: number[], layout: ArenaLayout, start: number, end: number, tag: number, first: number): number {
  const w0 = layout.wordAt(start);
  const count = layout.wordAt(end) - w0;
  if (count > 0) out.push(w0, count, tag, first);
  return first + count;
}
