// Fill: writes each new block's tag pattern over its spans.

@group(0) @binding(0) var<storage, read_write> arena: array<u32>;
@group(0) @binding(1) var<storage, read> spans: array<Span>;
@group(0) @binding(2) var<uniform> table: TableParams;
@group(0) @binding(4) var<storage, read> groups: array<Group>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) grid: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let e = entryIndex(wid, grid);
  if (e >= table.count) { return; }
  let g = groups[table.base + e];
  for (var k = g.first; k < g.first + g.count; k++) {
    let c = part(spans[k], g);
    let skew = c.start % LINE_WORDS;
    let base = c.start - skew;
    for (var i = lane; i < c.count + skew; i += WORKGROUP_SIZE) {
      if (i >= skew) { arena[base + i] = pattern(c.tag, c.first + i - skew); }
    }
  }
}
