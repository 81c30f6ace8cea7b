// The yardstick for verify: reads the whole arena with no block table, in verify's workgroup shape.
// The compare keeps the reads from being optimised away.

override CHUNK_WORDS: u32 = 8192u;

@group(0) @binding(0) var<storage, read> arena: array<u32>;
@group(0) @binding(2) var<uniform> table: TableParams; // count: workgroups
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>, 4>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) grid: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let e = entryIndex(wid, grid);
  if (e >= table.count) { return; }
  let start = e * CHUNK_WORDS;
  let count = min(CHUNK_WORDS, arrayLength(&arena) - start);
  var bad = 0u;
  for (var i = lane; i < count; i += WORKGROUP_SIZE) {
    bad += select(0u, 1u, arena[start + i] != pattern(e, start + i));
  }
  if (bad > 0u) { atomicAdd(&counters[2], bad); }
}
