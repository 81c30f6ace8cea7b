// The yardstick for verify: reads the whole arena with no block table, in verify's workgroup shape.
// The compare keeps the reads from being optimised away.

override GROUP_WORDS: u32 = 8192u;

@group(0) @binding(0) var<storage, read> arena: array<u32>;
@group(0) @binding(2) var<uniform> table: TableParams; // count: workgroups
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>, 4>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) grid: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let e = entryIndex(wid, grid);
  if (e >= table.count) { return; }
  let start = e * GROUP_WORDS;
  let count = min(GROUP_WORDS, arrayLength(&arena) - start);
  var bad = 0u;
  var i = lane;
  // Unrolled like verify, so that the yardstick is no weaker than the kernel it measures.
  for (; i + 3u * WORKGROUP_SIZE < count; i += 4u * WORKGROUP_SIZE) {
    let w0 = arena[start + i];
    let w1 = arena[start + i + WORKGROUP_SIZE];
    let w2 = arena[start + i + 2u * WORKGROUP_SIZE];
    let w3 = arena[start + i + 3u * WORKGROUP_SIZE];
    bad += select(0u, 1u, w0 != pattern(e, start + i))
         + select(0u, 1u, w1 != pattern(e, start + i + WORKGROUP_SIZE))
         + select(0u, 1u, w2 != pattern(e, start + i + 2u * WORKGROUP_SIZE))
         + select(0u, 1u, w3 != pattern(e, start + i + 3u * WORKGROUP_SIZE));
  }
  for (; i < count; i += WORKGROUP_SIZE) {
    bad += select(0u, 1u, arena[start + i] != pattern(e, start + i));
  }
  if (bad > 0u) { atomicAdd(&counters[2], bad); }
}
