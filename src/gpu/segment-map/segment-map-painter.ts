// The segment map's GPU side without a canvas: pipeline, instance buffers (full and merged levels)
// and one frame's encoding into any texture view. SegmentMapRenderer paints canvas textures with it;
// the device benchmark paints an offscreen texture (Dawn for Node has no canvas).
import shader from '../../../shaders/segment-map.wgsl?raw';
import type { MemoryLayout } from '../../trace/measures/memory-layout';
import { fillInstances, INSTANCE_WORDS, lodInstances, visibleRanges, withMarks, type SegmentMapGeometry } from '../../plot/segment-map-geometry';
import { DIMMED_ALPHA, PALETTE } from './segment-map-palette';

export interface SegmentMapView {
  /** Bytes (from a row's start) at the canvas's left edge. */
  x0: number;
  pxPerByte: number;
  /** Canvas size in CSS px, and device pixels per CSS px. */
  width: number;
  height: number;
  dpr: number;
}

const UNIFORM_BYTES = 32 + 8 * 16;
/** Below this many blocks every frame draws them all (culled); above, zoomed-out frames use merged bins. */
const LOD_MIN_BLOCKS = 65_536;

/** Instances to draw: the full set (one per block) or a merged level of detail. */
export interface Level {
  data: ArrayBuffer;
  count: number;
  buffer: GPUBuffer | null;
  bindGroup: GPUBindGroup | null;
}

export interface Plan {
  level: Level;
  /** [first instance, count] ranges, drawn in order (segment bands before blocks). */
  ranges: [number, number][];
}

/** Chooses what a frame draws; shared by the WebGPU and Canvas 2D paths. */
export class SegmentMapScene {
  private full: Level;
  /** Merged levels by bin size (a power of two of bytes), made when a zoom first needs one. */
  private levels = new Map<number, Level>();

  /** Whether any block is marked: the unmarked ones are then dimmed. */
  readonly marking: boolean;

  /** `marked`: per block of `layout`, 1 where a selection marks it (null: none); `data`: the instances,
   * when they are known (another scene's with other marks). */
  constructor(
    readonly geometry: SegmentMapGeometry,
    readonly layout: MemoryLayout,
    readonly marked: Uint8Array | null = null,
    data: ArrayBuffer = fillInstances(geometry, layout, marked),
  ) {
    this.marking = marked !== null;
    this.full = { data, count: data.byteLength / (INSTANCE_WORDS * 4), buffer: null, bindGroup: null };
  }

  /** This scene with other marks: the instances copied and their blocks' flags written again. */
  withMarks(marked: Uint8Array | null): SegmentMapScene {
    return new SegmentMapScene(this.geometry, this.layout, marked, withMarks(this.full.data, this.layout, marked));
  }

  /** The merged level for bins of at most a pixel at `pxPerByte`, if merging is worth it there. */
  private levelFor(pxPerByte: number): Level | null {
    const blocks = this.layout.blockAddr.length;
    if (blocks < LOD_MIN_BLOCKS || !(pxPerByte > 0)) return null;
    const bin = 2 ** Math.floor(Math.log2(1 / pxPerByte));
    if (bin < 1024) return null;
    let level = this.levels.get(bin);
    if (!level) {
      const lod = lodInstances(this.geometry, this.layout, bin, this.marked);
      level = { data: lod.data, count: lod.count, buffer: null, bindGroup: null };
      this.levels.set(bin, level);
    }
    // Worth it only while merging removes most blocks; deeper zooms cull the full set instead.
    return level.count < blocks / 4 ? level : null;
  }

  /**
   * Builds the merged levels that zooming in from `pxPerByte` will want, one per call (for idle
   * time, so that the first zoom does not stall on them); false once there is none left to build.
   */
  prepare(pxPerByte: number): boolean {
    for (let p = pxPerByte; ; p *= 2) {
      const bin = 2 ** Math.floor(Math.log2(1 / p));
      if (this.layout.blockAddr.length < LOD_MIN_BLOCKS || bin < 1024) return false;
      if (!this.levels.has(bin)) return this.levelFor(p) !== null;
      if (this.levels.get(bin)!.count >= this.layout.blockAddr.length / 4) return false;
    }
  }

  /** A merged level drawn whole while bins are at most a pixel and merging removes most blocks, else the full set culled per row. */
  plan(view: SegmentMapView): Plan {
    const { geometry, layout } = this;
    const level = this.levelFor(view.pxPerByte);
    if (level) return { level, ranges: [[0, level.count]] };
    const { segments, blocks: visible } = visibleRanges(geometry, layout, view.x0, view.x0 + view.width / view.pxPerByte);
    return { level: this.full, ranges: [...segments, ...visible] };
  }

  /** Whether this scene draws exactly what `other` draws (many slider positions replay alike). */
  looksLike(other: SegmentMapScene): boolean {
    if (this.marking !== other.marking) return false;
    const a = new Uint32Array(this.full.data);
    const b = new Uint32Array(other.full.data);
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** GPU buffers are gone (device lost) or no longer wanted. */
  release(destroy: boolean): void {
    for (const level of [this.full, ...this.levels.values()]) {
      if (destroy) level.buffer?.destroy();
      level.buffer = level.bindGroup = null;
    }
  }
}

export class SegmentMapPainter {
  readonly pipeline: GPURenderPipeline;
  private readonly uniforms: GPUBuffer;

  constructor(
    readonly device: GPUDevice,
    format: GPUTextureFormat,
  ) {
    const module = device.createShaderModule({ code: shader });
    this.pipeline = device.createRenderPipeline({
      layout: 'auto',
      vertex: { module, entryPoint: 'vs' },
      fragment: {
        module,
        entryPoint: 'fs',
        targets: [{ format, blend: { color: { srcFactor: 'one', dstFactor: 'one-minus-src-alpha' }, alpha: { srcFactor: 'one', dstFactor: 'one-minus-src-alpha' } } }],
      },
      primitive: { topology: 'triangle-list' },
    });
    this.uniforms = device.createBuffer({ size: UNIFORM_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  }

  /** GPU copies are made on first use, and again after a device loss. */
  private upload(level: Level): GPUBindGroup {
    if (level.bindGroup && level.buffer) return level.bindGroup;
    level.buffer = this.device.createBuffer({ size: Math.max(level.data.byteLength, INSTANCE_WORDS * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    this.device.queue.writeBuffer(level.buffer, 0, level.data);
    level.bindGroup = this.device.createBindGroup({
      layout: this.pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: this.uniforms } },
        { binding: 1, resource: { buffer: level.buffer } },
      ],
    });
    return level.bindGroup;
  }

  /** Clears `target` and draws the scene (if any) at `view`; submits. */
  paint(target: GPUTextureView, scene: SegmentMapScene | null, view: SegmentMapView): void {
    const u = new Float32Array(UNIFORM_BYTES / 4);
    const hi = Math.fround(view.x0);
    u.set([hi, view.x0 - hi, view.pxPerByte, view.dpr, view.width, view.height, scene?.marking ? DIMMED_ALPHA : 1]);
    PALETTE.forEach((p, i) => u.set(p.rgba, 8 + i * 4));
    this.device.queue.writeBuffer(this.uniforms, 0, u);
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginRenderPass({
      colorAttachments: [{ view: target, loadOp: 'clear', storeOp: 'store', clearValue: { r: 0, g: 0, b: 0, a: 0 } }],
    });
    if (scene) {
      const plan = scene.plan(view);
      pass.setPipeline(this.pipeline);
      pass.setBindGroup(0, this.upload(plan.level));
      // Rows are contiguous instance ranges; 6 vertices (two triangles) per instance.
      for (const [first, count] of plan.ranges) pass.draw(6 * count, 1, 6 * first);
    }
    pass.end();
    this.device.queue.submit([encoder.finish()]);
  }
}
