// Verify: counts the words of live blocks that do not hold their own block's pattern.

@group(0) @binding(0) var<storage, read> arena: array<u32>;
@group(0) @binding(1) var<storage, read> chunks: array<Chunk>;
@group(0) @binding(2) var<uniform> table: TableParams;
@group(0) @binding(4) var<storage, read> groups: array<Group>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>, 4>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) grid: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let e = entryIndex(wid, grid);
  if (e >= table.count) { return; }
  let g = groups[e];
  var bad = 0u;
  for (var k = g.first; k < g.first + g.count; k++) {
    let c = chunks[k];
    for (var i = lane; i < c.count; i += WORKGROUP_SIZE) {
      bad += select(0u, 1u, arena[c.start + i] != pattern(c.tag, c.first + i));
    }
  }
  if (bad > 0u) { atomicAdd(&counters[0], bad); }
}
