// Op: the workload's step. Each new block is written from the block its op reads: an elementwise
// touch that reads the input's words (checking them on the way) and writes the output's pattern,
// so verify can still check the output afterwards. Output word x reads input word x; past the end
// of a shorter input (or with none, count 0) the output is only written.

struct OpEntry {
  output: Span,
  input: Span, // count 0: the op has no input to read
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
  let g = groups[table.base + e];
  var bad = 0u;
  for (var k = g.first; k < g.first + g.count; k++) {
    let op = ops[k];
    let o = part(op.output, g);
    let n = partInput(op.input, g);
    // Output words are aligned to lines (stores matter most); index i is output word x = i - skew.
    let skew = o.start % LINE_WORDS;
    let base = o.start - skew;
    let end = o.count + skew;
    var i = lane;
    if (i < skew) { i += WORKGROUP_SIZE; }
    // Four words a step while they last, the loads issued together.
    for (; i + 3u * WORKGROUP_SIZE < end; i += 4u * WORKGROUP_SIZE) {
      let x = i - skew;
      if (x + 3u * WORKGROUP_SIZE < n.count) {
        let w0 = arena[n.start + x];
        let w1 = arena[n.start + x + WORKGROUP_SIZE];
        let w2 = arena[n.start + x + 2u * WORKGROUP_SIZE];
        let w3 = arena[n.start + x + 3u * WORKGROUP_SIZE];
        bad += select(0u, 1u, w0 != pattern(n.tag, n.first + x))
             + select(0u, 1u, w1 != pattern(n.tag, n.first + x + WORKGROUP_SIZE))
             + select(0u, 1u, w2 != pattern(n.tag, n.first + x + 2u * WORKGROUP_SIZE))
             + select(0u, 1u, w3 != pattern(n.tag, n.first + x + 3u * WORKGROUP_SIZE));
      } else {
        for (var y = x; y < n.count && y < x + 4u * WORKGROUP_SIZE; y += WORKGROUP_SIZE) {
          bad += select(0u, 1u, arena[n.start + y] != pattern(n.tag, n.first + y));
        }
      }
      arena[base + i] = pattern(o.tag, o.first + x);
      arena[base + i + WORKGROUP_SIZE] = pattern(o.tag, o.first + x + WORKGROUP_SIZE);
      arena[base + i + 2u * WORKGROUP_SIZE] = pattern(o.tag, o.first + x + 2u * WORKGROUP_SIZE);
      arena[base + i + 3u * WORKGROUP_SIZE] = pattern(o.tag, o.first + x + 3u * WORKGROUP_SIZE);
    }
    for (; i < end; i += WORKGROUP_SIZE) {
      let x = i - skew;
      if (x < n.count) { bad += select(0u, 1u, arena[n.start + x] != pattern(n.tag, n.first + x)); }
      arena[base + i] = pattern(o.tag, o.first + x);
    }
  }
  if (bad > 0u) { atomicAdd(&counters[1], bad); }
}
