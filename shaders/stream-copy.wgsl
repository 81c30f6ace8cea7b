// The yardstick for op (which reads one block and writes another): copies the arena's lower half
// onto its upper half with no block table, unrolled like op, one workgroup per GROUP_WORDS words.

override GROUP_WORDS: u32 = 8192u;

@group(0) @binding(0) var<storage, read_write> arena: array<u32>;
@group(0) @binding(2) var<uniform> table: TableParams; // count: workgroups (over the lower half)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) grid: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let e = entryIndex(wid, grid);
  if (e >= table.count) { return; }
  let half = arrayLength(&arena) / 2u;
  let start = e * GROUP_WORDS;
  let count = min(GROUP_WORDS, half - start);
  var i = lane;
  for (; i + 3u * WORKGROUP_SIZE < count; i += 4u * WORKGROUP_SIZE) {
    let w0 = arena[start + i];
    let w1 = arena[start + i + WORKGROUP_SIZE];
    let w2 = arena[start + i + 2u * WORKGROUP_SIZE];
    let w3 = arena[start + i + 3u * WORKGROUP_SIZE];
    arena[half + start + i] = w0 + 1u;
    arena[half + start + i + WORKGROUP_SIZE] = w1 + 1u;
    arena[half + start + i + 2u * WORKGROUP_SIZE] = w2 + 1u;
    arena[half + start + i + 3u * WORKGROUP_SIZE] = w3 + 1u;
  }
  for (; i < count; i += WORKGROUP_SIZE) {
    arena[half + start + i] = arena[start + i] + 1u;
  }
}
