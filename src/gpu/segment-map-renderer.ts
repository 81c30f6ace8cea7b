// Draws the segment map on a canvas: WebGPU rectangles from an instance buffer (one instance per
// segment band and per block, pulled by the vertex shader), or Canvas 2D when WebGPU has no adapter. Knows nothing of React: its owner hands it the
// layout's geometry and the view, and it redraws at most once per animation frame.
import shader from '../../shaders/segment-map.wgsl?raw';
import type { MemoryLayout } from '../trace/memory-layout';
import { FLAG_OVERSIZE, FLAG_SEGMENT, fillInstances, INSTANCE_WORDS, lodInstances, visibleRanges, type SegmentMapGeometry } from './segment-map-geometry';
import { HATCH_COLOR, PALETTE } from './segment-map-palette';

export type SegmentMapBackend = 'webgpu' | 'canvas2d';

export interface SegmentMapView {
  /** Bytes (from a row's start) at the canvas's left edge. */
  x0: number;
  pxPerByte: number;
  /** Canvas size in CSS px, and device pixels per CSS px. */
  width: number;
  height: number;
  dpr: number;
}

export interface SegmentMapRendererOptions {
  /** Skip WebGPU (tests of the fallback). */
  canvas2d?: boolean;
  /** The GPU device was lost and could not be recreated on this canvas: make a new canvas and renderer. */
  failed?(message: string): void;
}

interface Gpu {
  device: GPUDevice;
  context: GPUCanvasContext;
  format: GPUTextureFormat;
  pipeline: GPURenderPipeline;
  uniforms: GPUBuffer;
}

const UNIFORM_BYTES = 32 + 8 * 16;
/** Below this many blocks every frame draws them all (culled); above, zoomed-out frames use merged bins. */
const LOD_MIN_BLOCKS = 65_536;

/** Instances to draw: the full set (one per block) or a merged level of detail. */
interface Level {
  data: ArrayBuffer;
  count: number;
  buffer: GPUBuffer | null;
  bindGroup: GPUBindGroup | null;
}

/** A device and a configured canvas context, or null where WebGPU has no adapter. */
async function acquire(canvas: HTMLCanvasElement, onLost: (info: GPUDeviceLostInfo) => void): Promise<Gpu | null> {
  const gpu = globalThis.navigator?.gpu;
  if (!gpu) return null;
  const adapter = await gpu.requestAdapter().catch(() => null);
  if (!adapter) return null;
  // A million blocks take 24 MB of instances: more than the default 128 MiB binding only past ~5M.
  const device = await adapter.requestDevice({
    requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize },
  });
  void device.lost.then(onLost);
  const context = canvas.getContext('webgpu');
  if (!context) {
    device.destroy();
    return null;
  }
  const format = gpu.getPreferredCanvasFormat();
  context.configure({ device, format, alphaMode: 'premultiplied' });
  const module = device.createShaderModule({ code: shader });
  const pipeline = device.createRenderPipeline({
    layout: 'auto',
    vertex: { module, entryPoint: 'vs' },
    fragment: {
      module,
      entryPoint: 'fs',
      targets: [{ format, blend: { color: { srcFactor: 'one', dstFactor: 'one-minus-src-alpha' }, alpha: { srcFactor: 'one', dstFactor: 'one-minus-src-alpha' } } }],
    },
    primitive: { topology: 'triangle-list' },
  });
  const uniforms = device.createBuffer({ size: UNIFORM_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  return { device, context, format, pipeline, uniforms };
}

export class SegmentMapRenderer {
  private gpu: Gpu | null;
  private ctx2d: CanvasRenderingContext2D | null = null;
  private geometry: SegmentMapGeometry | null = null;
  private layout: MemoryLayout | null = null;
  private full: Level | null = null;
  /** Merged levels by bin size (a power of two of bytes), made when a zoom first needs one. */
  private levels = new Map<number, Level>();
  private view: SegmentMapView = { x0: 0, pxPerByte: 1, width: 1, height: 1, dpr: 1 };
  private frame = 0;
  private destroyed = false;
  /** Frames drawn, for tests and benchmarks. */
  frames = 0;

  private constructor(
    readonly canvas: HTMLCanvasElement,
    gpu: Gpu | null,
    private readonly options: SegmentMapRendererOptions,
  ) {
    this.gpu = gpu;
    if (!gpu) this.ctx2d = canvas.getContext('2d');
  }

  static async create(canvas: HTMLCanvasElement, options: SegmentMapRendererOptions = {}): Promise<SegmentMapRenderer> {
    let renderer: SegmentMapRenderer | null = null;
    const gpu = options.canvas2d ? null : await acquire(canvas, (info) => renderer?.lost(info));
    renderer = new SegmentMapRenderer(canvas, gpu, options);
    return renderer;
  }

  get backend(): SegmentMapBackend {
    return this.gpu ? 'webgpu' : 'canvas2d';
  }

  /** A new layout (or a new packing of it): rebuilds the instances. */
  setScene(geometry: SegmentMapGeometry, layout: MemoryLayout): void {
    this.geometry = geometry;
    this.layout = layout;
    this.dropLevels();
    const data = fillInstances(geometry, layout);
    this.full = { data, count: data.byteLength / (INSTANCE_WORDS * 4), buffer: null, bindGroup: null };
    this.invalidate();
  }

  setView(view: SegmentMapView): void {
    this.view = view;
    const w = Math.max(1, Math.round(view.width * view.dpr));
    const h = Math.max(1, Math.round(view.height * view.dpr));
    if (this.canvas.width !== w) this.canvas.width = w;
    if (this.canvas.height !== h) this.canvas.height = h;
    this.invalidate();
  }

  /** Redraw on the next animation frame (several calls before it draw once). */
  invalidate(): void {
    if (this.frame || this.destroyed) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Draws now. */
  draw(): void {
    if (this.destroyed) return;
    if (this.gpu) this.drawGpu(this.gpu);
    else this.drawCanvas2d();
    this.frames++;
  }

  /** Resolves when the GPU has finished the frames drawn so far (benchmarks). */
  async finished(): Promise<void> {
    await this.gpu?.device.queue.onSubmittedWorkDone();
  }

  destroy(): void {
    this.destroyed = true;
    if (this.frame) cancelAnimationFrame(this.frame);
    this.dropLevels();
    this.gpu?.device.destroy();
    this.gpu = null;
  }

  private dropLevels(): void {
    this.full?.buffer?.destroy();
    for (const level of this.levels.values()) level.buffer?.destroy();
    this.full = null;
    this.levels.clear();
  }

  /** GPU copies are made on first use, and again after a device loss. */
  private upload(gpu: Gpu, level: Level): GPUBindGroup {
    if (level.bindGroup && level.buffer) return level.bindGroup;
    level.buffer = gpu.device.createBuffer({ size: Math.max(level.data.byteLength, INSTANCE_WORDS * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    gpu.device.queue.writeBuffer(level.buffer, 0, level.data);
    level.bindGroup = gpu.device.createBindGroup({
      layout: gpu.pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: gpu.uniforms } },
        { binding: 1, resource: { buffer: level.buffer } },
      ],
    });
    return level.bindGroup;
  }

  /** What this frame draws: a merged level drawn whole, or the full set culled to the visible bytes per row. */
  private plan(): { level: Level; segments: [number, number][]; blocks: [number, number][] } | null {
    const { geometry, layout, view, full } = this;
    if (!geometry || !layout || !full) return null;
    const blocks = layout.blockAddr.length;
    if (blocks >= LOD_MIN_BLOCKS && view.pxPerByte > 0) {
      const bin = 2 ** Math.floor(Math.log2(1 / view.pxPerByte));
      if (bin >= 1024) {
        let level = this.levels.get(bin);
        if (!level) {
          const lod = lodInstances(geometry, layout, bin);
          level = { data: lod.data, count: lod.count, buffer: null, bindGroup: null };
          this.levels.set(bin, level);
        }
        // Worth it only while merging removes most blocks; deeper zooms cull the full set instead.
        if (level.count < blocks / 4) return { level, segments: [[0, level.count]], blocks: [] };
      }
    }
    return { level: full, ...visibleRanges(geometry, layout, view.x0, view.x0 + view.width / view.pxPerByte) };
  }

  private drawGpu(gpu: Gpu): void {
    const v = this.view;
    const u = new Float32Array(UNIFORM_BYTES / 4);
    const hi = Math.fround(v.x0);
    u.set([hi, v.x0 - hi, v.pxPerByte, v.dpr, v.width, v.height]);
    PALETTE.forEach((p, i) => u.set(p.rgba, 8 + i * 4));
    gpu.device.queue.writeBuffer(gpu.uniforms, 0, u);
    const encoder = gpu.device.createCommandEncoder();
    const pass = encoder.beginRenderPass({
      colorAttachments: [{ view: gpu.context.getCurrentTexture().createView(), loadOp: 'clear', storeOp: 'store', clearValue: { r: 0, g: 0, b: 0, a: 0 } }],
    });
    const plan = this.plan();
    if (plan) {
      pass.setPipeline(gpu.pipeline);
      pass.setBindGroup(0, this.upload(gpu, plan.level));
      // One draw per row and kind: rows are contiguous instance ranges.
      for (const [first, count] of plan.segments) pass.draw(6 * count, 1, 6 * first);
      for (const [first, count] of plan.blocks) pass.draw(6 * count, 1, 6 * first);
    }
    pass.end();
    gpu.device.queue.submit([encoder.finish()]);
  }

  private drawCanvas2d(): void {
    const ctx = this.ctx2d;
    if (!ctx) return;
    const v = this.view;
    ctx.setTransform(v.dpr, 0, 0, v.dpr, 0, 0);
    ctx.clearRect(0, 0, v.width, v.height);
    const plan = this.plan();
    if (!plan) return;
    const f = new Float32Array(plan.level.data);
    const flags = new Uint32Array(plan.level.data);
    const onePx = 1 / v.dpr;
    let hatch: CanvasPattern | null = null;
    for (const [first, count] of [...plan.segments, ...plan.blocks]) {
      for (let i = first; i < first + count; i++) {
        const o = i * INSTANCE_WORDS;
        const fl = flags[o + 5]!;
        let left = (f[o]! - v.x0 + f[o + 1]!) * v.pxPerByte;
        let width = f[o + 2]! * v.pxPerByte;
        let top = f[o + 3]!;
        let height = f[o + 4]!;
        if (fl & FLAG_SEGMENT) {
          left -= onePx;
          width += 2 * onePx;
          top -= onePx;
          height += 2 * onePx;
        } else {
          if (width > 4 * onePx) width -= onePx;
          width = Math.max(width, onePx);
        }
        const right = Math.min(left + width, v.width + 8);
        left = Math.max(left, -8);
        if (right <= left) continue;
        ctx.fillStyle = PALETTE[fl & 15]!.css;
        ctx.fillRect(left, top, right - left, height);
        if (fl & FLAG_OVERSIZE) {
          hatch ??= hatchPattern(ctx);
          if (hatch) {
            ctx.fillStyle = hatch;
            ctx.fillRect(left, top, right - left, height);
          }
        }
      }
    }
  }

  private lost(info: GPUDeviceLostInfo): void {
    if (this.destroyed || info.reason === 'destroyed') return;
    // Driver reset or GPU process crash: a new device on the same canvas, the instances uploaded again.
    this.gpu = null;
    void acquire(this.canvas, (next) => this.lost(next)).then(
      (gpu) => {
        if (this.destroyed) {
          gpu?.device.destroy();
          return;
        }
        if (!gpu) {
          this.options.failed?.(`the GPU device was lost (${info.message}) and no new one could be made`);
          return;
        }
        // Buffers of the lost device are gone: every level uploads again when next drawn.
        for (const level of [this.full, ...this.levels.values()]) if (level) level.buffer = level.bindGroup = null;
        this.gpu = gpu;
        this.invalidate();
      },
      (e: unknown) => this.options.failed?.(String(e)),
    );
  }
}

function hatchPattern(ctx: CanvasRenderingContext2D): CanvasPattern | null {
  const tile = document.createElement('canvas');
  tile.width = tile.height = 7;
  const t = tile.getContext('2d');
  if (!t) return null;
  t.strokeStyle = PALETTE[HATCH_COLOR]!.css;
  t.lineWidth = 2;
  t.beginPath();
  t.moveTo(0, 7);
  t.lineTo(7, 0);
  t.stroke();
  return ctx.createPattern(tile, 'repeat');
}
