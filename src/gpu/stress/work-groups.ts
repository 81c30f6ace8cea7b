// Splits a kernel's table into workgroup shares: consecutive entries adding up to about CHUNK_WORDS
// words each (the WGSL `Group` of shaders/arena.wgsl). A scaled arena holds thousands of blocks of a
// few words; one workgroup apiece would spend the dispatch on starting workgroups.
import { CHUNK_WORDS } from './block-chunks';

let scratch = new Uint32Array(1024);

/** Pairs (first entry, entry count); `stride` is u32s per entry, its word count at offset 1. */
export function workGroups(table: Uint32Array, stride: number): Uint32Array<ArrayBuffer> {
  const entries = table.length / stride;
  // At most one share per entry, written into a buffer kept between calls (this runs once per batch
  // over every live block: a fresh zeroed array each time cost as much as the loop).
  if (scratch.length < 2 * entries) scratch = new Uint32Array(4 * entries);
  const out = scratch;
  let n = 0;
  let first = 0;
  let words = 0;
  for (let e = 0; e < entries; e++) {
    const count = table[e * stride + 1]!;
    if (e > first && words + count > CHUNK_WORDS) {
      out[n++] = first;
      out[n++] = e - first;
      first = e;
      words = 0;
    }
    words += count;
  }
  if (entries > first) {
    out[n++] = first;
    out[n++] = entries - first;
  }
  return out.slice(0, n);
}
