// Splits a kernel's table into workgroup shares of about GROUP_WORDS words (the WGSL `Group` of
// shaders/arena.wgsl): a span longer than that is cut into shares of one span each (a word offset
// and a word count), shorter ones are gathered, whole, into shares of consecutive entries. A scaled
// arena holds thousands of blocks of a few words; one workgroup apiece would spend the dispatch on
// starting workgroups, and one workgroup for a big block would leave the GPU idle.

/**
 * Words a workgroup handles at most, unless its share is one whole short span. A batch's fill and op
 * dispatches hold a few megabytes: at 65,536 words (256 a thread) they ran as one wave of long
 * workgroups, each dispatch as slow as one workgroup, and a live run on the H200 did 0.50M requests/s
 * with stress on; at 16,384 it did 0.81M (8,192: 0.69M, 4,096: 0.46M, where the shares' planning
 * costs more than the GPU saves; medians of 7, Dawn for Node).
 */
export const GROUP_WORDS = 16384;

/** u32s per share: first entry, entry count, word offset and word count (the last two: a one-span share). */
export const GROUP_U32S = 4;

/**
 * Appends the shares of `table` (`stride` u32s an entry, its word count at offset 1) to `out` from
 * u32 `at`, entry indices counted from `base`; returns the u32 after them. `out` must have room for
 * workGroupsRoom(table, stride) u32s.
 */
export function writeWorkGroups(table: Uint32Array, stride: number, base: number, out: Uint32Array, at: number): number {
  const entries = table.length / stride;
  let n = at;
  let first = 0;
  let words = 0;
  for (let e = 0; e < entries; e++) {
    const count = table[e * stride + 1]!;
    if (count <= GROUP_WORDS && (e === first || words + count <= GROUP_WORDS)) {
      words += count;
      continue;
    }
    if (e > first) n = share(out, n, base + first, e - first, e - first === 1 ? table[first * stride + 1]! : 0);
    if (count > GROUP_WORDS) {
      for (let w = 0; w < count; w += GROUP_WORDS) n = share(out, n, base + e, 1, Math.min(GROUP_WORDS, count - w), w);
      first = e + 1;
      words = 0;
    } else {
      first = e;
      words = count;
    }
  }
  if (entries > first) n = share(out, n, base + first, entries - first, entries - first === 1 ? table[first * stride + 1]! : 0);
  return n;
}

/** The most u32s writeWorkGroups writes for `table`: one share per entry, and one per GROUP_WORDS of a long span. */
export function workGroupsRoom(table: Uint32Array, stride: number): number {
  let n = 0;
  for (let e = 1; e < table.length; e += stride) n += 1 + Math.floor(table[e]! / GROUP_WORDS);
  return n * GROUP_U32S;
}

/** The shares of `table` on their own (tests, benchmarks). */
export function workGroups(table: Uint32Array, stride: number): Uint32Array<ArrayBuffer> {
  const out = new Uint32Array(workGroupsRoom(table, stride));
  return out.slice(0, writeWorkGroups(table, stride, 0, out, 0));
}

/** Writes one share: `count` entries from `first`, or words [offset, offset + words) of one entry. */
function share(out: Uint32Array, n: number, first: number, count: number, words: number, offset = 0): number {
  out[n] = first;
  out[n + 1] = count;
  out[n + 2] = offset;
  out[n + 3] = words;
  return n + GROUP_U32S;
}
