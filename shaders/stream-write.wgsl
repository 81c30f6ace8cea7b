// The yardstick for fill: writes the whole arena with no block table, in the same workgroup shape
// (one workgroup per GROUP_WORDS words), so the ratio isolates what the table costs.

override GROUP_WORDS: u32 = 8192u;

@group(0) @binding(0) var<storage, read_write> arena: array<u32>;
@group(0) @binding(2) var<uniform> table: TableParams; // count: workgroups

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) grid: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let e = entryIndex(wid, grid);
  if (e >= table.count) { return; }
  let start = e * GROUP_WORDS;
  let count = min(GROUP_WORDS, arrayLength(&arena) - start);
  for (var i = lane; i < count; i += WORKGROUP_SIZE) {
    arena[start + i] = pattern(e, start + i);
  }
}
