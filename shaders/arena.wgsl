// Shared by the stress kernels (prepended to each): the span table entry, groups and the tag pattern.
// One workgroup handles one group (work-groups.ts): either consecutive whole spans adding up to about
// GROUP_WORDS words, so a scaled arena's many tiny blocks do not each cost a workgroup, or a part of
// one span, so a big block is spread over many. Its 256 threads stride through each span in turn, so
// neighbouring threads touch neighbouring words.

struct Span {
  start: u32, // first arena word
  count: u32, // words
  tag: u32,   // the allocation's tag
  first: u32, // index of the span's first word within its block
}

// A workgroup's share of the table: entries first .. first + count - 1, or, when count is 1, the
// words offset .. offset + words - 1 of entry first.
struct Group {
  first: u32,
  count: u32,
  offset: u32,
  words: u32,
}

struct TableParams {
  count: u32, // groups (the dispatch may round up)
  base: u32,  // this batch's first group: a submission's batches share one table buffer
}

const WORKGROUP_SIZE: u32 = 256u;

// Words per 128-byte line. Kernels start each chunk's loop at the line below it (the `skew` words
// before the chunk are skipped), so a warp's stores cover whole lines: at a scaled arena chunks start
// anywhere, and stores straddling lines cost partial-line writes.
const LINE_WORDS: u32 = 32u;

// The value word `index` of the block tagged `tag` holds. Distinct tags give distinct values at
// almost every index, so a block written over another leaves words the other cannot explain.
fn pattern(tag: u32, index: u32) -> u32 {
  return tag * 0x9E3779B1u + index;
}

// The part of span `s` (an entry of group `g`) that the group handles: all of it but in a one-span group.
fn part(s: Span, g: Group) -> Span {
  if (g.count != 1u) { return s; }
  return Span(s.start + g.offset, g.words, s.tag, s.first + g.offset);
}

// The words of `input` that the op of `g`'s part of its output reads: output word x reads input word x.
fn partInput(input: Span, g: Group) -> Span {
  if (g.count != 1u) { return input; }
  let skip = min(g.offset, input.count);
  return Span(input.start + skip, input.count - skip, input.tag, input.first + skip);
}

// Tables can pass 65,535 groups, the per-dimension dispatch limit: dispatches are 2D.
fn entryIndex(wid: vec3<u32>, grid: vec3<u32>) -> u32 {
  return wid.x + wid.y * grid.x;
}
