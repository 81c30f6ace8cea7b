// Op: the workload's step. Each new block is written from the block its op reads: an elementwise
// touch that reads the input's words (checking them on the way) and writes the output's pattern,
// so verify can still check the output afterwards. Input words wrap when the input is shorter.

struct OpEntry {
  output: Chunk,
  input: Chunk, // count 0: the op has no input to read
}

@group(0) @binding(0) var<storage, read_write> arena: array<u32>;
@group(0) @binding(1) var<storage, read> ops: array<OpEntry>;
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
    let op = ops[k];
    var j = lane;
    for (var i = lane; i < op.output.count; i += WORKGROUP_SIZE) {
      if (op.input.count > 0u) {
        if (j >= op.input.count) { j = j % op.input.count; }
        let got = arena[op.input.start + j];
        bad += select(0u, 1u, got != pattern(op.input.tag, op.input.first + j));
        j += WORKGROUP_SIZE;
      }
      arena[op.output.start + i] = pattern(op.output.tag, op.output.first + i);
    }
  }
  if (bad > 0u) { atomicAdd(&counters[1], bad); }
}
