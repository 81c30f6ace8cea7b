// Segment map: one rectangle per segment band and per block (src/gpu/segment-map-renderer.ts), pulled
// from the instance buffer by vertex_index / 6 rather than drawn as instances: SwiftShader runs each
// instance of an instanced draw as a draw of its own (100k instances took seconds a frame), and real
// GPUs read a storage buffer just as fast.
// x comes as a hi/lo f32 pair of bytes from the row's start; subtracting the view's hi/lo origin
// first keeps deep zooms exact, where a single f32 of a multi-GiB offset would jitter by KiBs.

struct View {
  x0: vec2f,        // bytes at the canvas's left edge, hi and lo
  px_per_byte: f32,
  dpr: f32,
  size: vec2f,      // canvas size, CSS px
  dim: f32,         // how much of their colour unmarked blocks keep: below 1 while a selection marks some (FLAG_MARKED)
  pad: f32,
  colors: array<vec4f, 8>,
}

struct Instance {
  x: vec2f,         // bytes from the row's start, hi and lo
  width_bytes: f32,
  top: f32,         // CSS px
  height: f32,
  flags: u32,       // colour index in the low 4 bits, OVERSIZE, SEGMENT
}

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> instances: array<Instance>;

const OVERSIZE: u32 = 16u;
const SEGMENT: u32 = 32u;
const MARKED: u32 = 64u;
const DIM_GREY = vec3f(0.55, 0.55, 0.55);
const HATCH: u32 = 5u;

struct VertexOut {
  @builtin(position) position: vec4f,
  @location(0) @interpolate(flat) flags: u32,
}

@vertex
fn vs(@builtin(vertex_index) index: u32) -> VertexOut {
  let item = instances[index / 6u];
  let vertex = index % 6u;
  let flags = item.flags;
  let one_px = 1.0 / view.dpr;
  var left = ((item.x.x - view.x0.x) + (item.x.y - view.x0.y)) * view.px_per_byte;
  var width = item.width_bytes * view.px_per_byte;
  var top = item.top;
  var height = item.height;
  if ((flags & SEGMENT) != 0u) {
    // The band shows as a 1 px outline around its blocks.
    left -= one_px;
    width += 2.0 * one_px;
    top -= one_px;
    height += 2.0 * one_px;
  } else {
    // A 1 px seam between wide blocks; tiny blocks stay visible at one device pixel.
    if (width > 4.0 * one_px) {
      width -= one_px;
    }
    width = max(width, one_px);
  }
  // Clamped to just outside the canvas: huge coordinates at deep zoom would strain the rasterizer.
  let right = min(left + width, view.size.x + 8.0);
  left = max(left, -8.0);
  let corner = vec2f(f32((0x32u >> vertex) & 1u), f32((0x2cu >> vertex) & 1u));
  let px = vec2f(mix(left, max(right, left), corner.x), top + height * corner.y);
  var out: VertexOut;
  out.position = vec4f(px.x / view.size.x * 2.0 - 1.0, 1.0 - px.y / view.size.y * 2.0, 0.0, 1.0);
  out.flags = flags;
  return out;
}

@fragment
fn fs(in: VertexOut) -> @location(0) vec4f {
  var c = view.colors[in.flags & 15u];
  if ((in.flags & OVERSIZE) != 0u) {
    // Diagonal hatching in screen space: oversize blocks read as such at every zoom.
    let stripe = fract((in.position.x + in.position.y) / (7.0 * view.dpr));
    if (stripe < 0.35) {
      let h = view.colors[HATCH];
      c = vec4f(mix(c.rgb, h.rgb, h.a), c.a);
    }
  }
  if ((in.flags & (MARKED | SEGMENT)) == 0u) {
    // Towards grey rather than transparent: tiny blocks drawn over one another stay faint.
    c = vec4f(mix(DIM_GREY, c.rgb, view.dim), c.a);
  }
  return vec4f(c.rgb * c.a, c.a);
}
