// Shared by the stress kernels (prepended to each): the chunk table entry and the tag pattern.
// One workgroup handles one chunk (at most CHUNK_WORDS words of one block); its 256 threads stride
// through the chunk, so neighbouring threads touch neighbouring words.

struct Chunk {
  start: u32, // first arena word
  count: u32, // words
  tag: u32,   // the allocation's tag
  first: u32, // index of the chunk's first word within its block
}

struct TableParams {
  count: u32, // entries in the table (the dispatch may round up)
}

const WORKGROUP_SIZE: u32 = 256u;

// The value word `index` of the block tagged `tag` holds. Distinct tags give distinct values at
// almost every index, so a block written over another leaves words the other cannot explain.
fn pattern(tag: u32, index: u32) -> u32 {
  return tag * 0x9E3779B1u + index;
}

// Tables can pass 65,535 entries, the per-dimension dispatch limit: dispatches are 2D.
fn entryIndex(wid: vec3<u32>, groups: vec3<u32>) -> u32 {
  return wid.x + wid.y * groups.x;
}
