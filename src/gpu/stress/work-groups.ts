// Splits a kernel's table into workgroup shares: consecutive entries adding up to about CHUNK_WORDS
// words each (the WGSL `Group` of shaders/arena.wgsl). A scaled arena holds thousands of blocks of a
// few words; one workgroup apiece would spend the dispatch on starting workgroups.
import { CHUNK_WORDS } from './block-chunks';

/** Pairs (first entry, entry count); `stride` is u32s per entry, its word count at offset 1. */
export function workGroups(table: Uint32Array, stride: number): Uint32Array<ArrayBuffer> {
  const entries = table.length / stride;
  const out: number[] = [];
  let first = 0;
  let words = 0;
  for (let e = 0; e < entries; e++) {
    const count = table[e * stride + 1]!;
    if (e > first && words + count > CHUNK_WORDS) {
      out.push(first, e - first);
      first = e;
      words = 0;
    }
    words += count;
  }
  if (entries > first) out.push(first, entries - first);
  return Uint32Array.from(out);
}
