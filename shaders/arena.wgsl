// Shared by the stress kernels (prepended to each): the chunk table entry, groups and the tag pattern.
// One workgroup handles one group: consecutive table entries (chunks of at most CHUNK_WORDS words
// of one block each) adding up to about CHUNK_WORDS words, so a scaled arena's many tiny blocks do
// not each cost a workgroup. Its 256 threads stride through each chunk in turn, so neighbouring
// threads touch neighbouring words.

struct Chunk {
  start: u32, // first arena word
  count: u32, // words
  tag: u32,   // the allocation's tag
  first: u32, // index of the chunk's first word within its block
}

// A workgroup's share of the table: entries first .. first + count - 1.
struct Group {
  first: u32,
  count: u32,
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

// Tables can pass 65,535 groups, the per-dimension dispatch limit: dispatches are 2D.
fn entryIndex(wid: vec3<u32>, grid: vec3<u32>) -> u32 {
  return wid.x + wid.y * grid.x;
}
