// Fill: writes each new block's tag pattern over its chunks.

@group(0) @binding(0) var<storage, read_write> arena: array<u32>;
@group(0) @binding(1) var<storage, read> chunks: array<Chunk>;
@group(0) @binding(2) var<uniform> table: TableParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let e = entryIndex(wid, groups);
  if (e >= table.count) { return; }
  let c = chunks[e];
  for (var i = lane; i < c.count; i += WORKGROUP_SIZE) {
    arena[c.start + i] = pattern(c.tag, c.first + i);
  }
}
