// Verify: counts the words of live blocks that do not hold their own block's pattern.

@group(0) @binding(0) var<storage, read> arena: array<u32>;
@group(0) @binding(1) var<storage, read> spans: array<Span>;
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
    let c = part(spans[k], g);
    let skew = c.start % LINE_WORDS;
    let base = c.start - skew;
    let end = c.count + skew;
    // Index i is word i - skew of the chunk; the words before it (i < skew) are not checked.
    var i = lane;
    // Four independent loads a step while they last: more reads in flight per thread.
    for (; i + 3u * WORKGROUP_SIZE < end; i += 4u * WORKGROUP_SIZE) {
      let w0 = arena[base + i];
      let w1 = arena[base + i + WORKGROUP_SIZE];
      let w2 = arena[base + i + 2u * WORKGROUP_SIZE];
      let w3 = arena[base + i + 3u * WORKGROUP_SIZE];
      bad += select(0u, 1u, i >= skew && w0 != pattern(c.tag, c.first + i - skew))
           + select(0u, 1u, w1 != pattern(c.tag, c.first + i + WORKGROUP_SIZE - skew))
           + select(0u, 1u, w2 != pattern(c.tag, c.first + i + 2u * WORKGROUP_SIZE - skew))
           + select(0u, 1u, w3 != pattern(c.tag, c.first + i + 3u * WORKGROUP_SIZE - skew));
    }
    for (; i < end; i += WORKGROUP_SIZE) {
      bad += select(0u, 1u, i >= skew && arena[base + i] != pattern(c.tag, c.first + i - skew));
    }
  }
  if (bad > 0u) { atomicAdd(&counters[0], bad); }
}
