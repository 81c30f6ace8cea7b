// Draws the segment map on a canvas: WebGPU rectangles from an instance buffer (one instance per
// segment band and per block, pulled by the vertex shader; see segment-map-painter.ts), or Canvas 2D
// when WebGPU has no adapter. Knows nothing of React: its owner hands it the layout's geometry and the
// view, and it redraws at most once per animation frame (lib/frame-scheduler.ts).
import type { MemoryLayout } from '../../trace/measures/memory-layout';
import { cancelDraw, drawPending, framesDrawn, scheduleDraw } from '../../lib/frame-scheduler';
import { measure } from '../../lib/timing';
import type { SegmentMapGeometry } from '../../plot/segment-map-geometry';
import { DIMMED_CSS, HATCH_COLOR, PALETTE } from './segment-map-palette';
import { SegmentMapPainter, SegmentMapScene, type SegmentMapView } from './segment-map-painter';
import { visibleRects, type MapRect } from './segment-map-rects';

export type { SegmentMapView } from './segment-map-painter';
export type SegmentMapBackend = 'webgpu' | 'canvas2d';

export interface SegmentMapRendererOptions {
  /** Skip WebGPU (tests of the fallback, and after WebGPU could not present). */
  canvas2d?: boolean;
  /** The GPU device was lost and could not be recreated on this canvas: make a new canvas and renderer,
   * on Canvas 2D where `canvas2d` (WebGPU cannot present on this page). */
  failed?(message: string, canvas2d: boolean): void;
}

/** Why a map is drawn on Canvas 2D where WebGPU has an adapter. */
const CANNOT_PRESENT =
  'the browser destroyed the WebGPU device of the map, which it does where a WebGPU canvas cannot be shown (software compositing)';

interface Gpu {
  context: GPUCanvasContext;
  painter: SegmentMapPainter;
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
  // A device destroyed here is not a loss to report.
  let destroyedHere = false;
  void device.lost.then((info) => destroyedHere || onLost(info));
  const context = canvas.getContext('webgpu');
  if (!context) {
    destroyedHere = true;
    device.destroy();
    return null;
  }
  const format = gpu.getPreferredCanvasFormat();
  context.configure({ device, format, alphaMode: 'premultiplied' });
  return { context, painter: new SegmentMapPainter(device, format) };
}

export class SegmentMapRenderer {
  private gpu: Gpu | null;
  private ctx2d: CanvasRenderingContext2D | null = null;
  private scene: SegmentMapScene | null = null;
  private view: SegmentMapView = { x0: 0, pxPerByte: 1, width: 1, height: 1, dpr: 1 };
  private destroyed = false;
  /**
   * The GPU's work for the last frame, until it finishes. A frame asked for meanwhile waits for it
   * (`owed`), then draws the latest view: where the GPU takes longer than a frame (SwiftShader: 10-40
   * ms), drawing every animation frame queued work without bound (a playing cursor's map fell
   * seconds behind, and the backlog took a core from whatever came next).
   */
  private inFlight: Promise<void> | null = null;
  private owed = false;
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
  setScene(geometry: SegmentMapGeometry, layout: MemoryLayout, marked: Uint8Array | null = null): void {
    this.show(new SegmentMapScene(geometry, layout, marked));
  }

  /** Other marks on the scene drawn (its layout's blocks): the same rectangles, their flags written again. */
  setMarks(marked: Uint8Array | null): void {
    if (this.scene) this.show(this.scene.withMarks(marked));
  }

  private show(scene: SegmentMapScene): void {
    // The same picture keeps the scene drawn (and its GPU buffers): no frame, no repaint to present.
    if (this.scene?.looksLike(scene)) return;
    this.scene?.release(true);
    this.scene = scene;
    this.invalidate();
    // Merged levels for the zooms to come, built while the page is idle (tens of ms each at 1M blocks).
    const idle = globalThis.requestIdleCallback ?? ((f: () => void) => setTimeout(f, 50));
    const next = (): void => {
      if (this.scene === scene && !this.destroyed && scene.prepare(this.view.pxPerByte)) idle(next);
    };
    idle(next);
  }

  setView(view: SegmentMapView): void {
    const v = this.view;
    const same = v.x0 === view.x0 && v.pxPerByte === view.pxPerByte && v.width === view.width && v.height === view.height && v.dpr === view.dpr;
    this.view = view;
    const w = Math.max(1, Math.round(view.width * view.dpr));
    const h = Math.max(1, Math.round(view.height * view.dpr));
    // A canvas given a new size is cleared: drawn again even where the view is the same.
    const resized = this.canvas.width !== w || this.canvas.height !== h;
    if (this.canvas.width !== w) this.canvas.width = w;
    if (this.canvas.height !== h) this.canvas.height = h;
    if (!same || resized) this.invalidate();
  }

  /** Redraw in the next animation frame (several calls before it draw once). */
  invalidate(): void {
    if (!this.destroyed) scheduleDraw(this.drawInFrame);
  }

  private readonly drawInFrame = (): void => this.draw();

  /** Draws now. */
  draw(): void {
    if (this.destroyed) return;
    if (this.gpu) {
      if (this.inFlight) {
        this.owed = true;
        return;
      }
      this.drawGpu(this.gpu);
    } else this.drawCanvas2d();
    this.frames++;
  }

  /** Resolves once a frame asked for (if any) is drawn and the GPU has finished it. */
  async settled(): Promise<void> {
    // Two rounds: a frame asked for while another was in flight is drawn once that one finishes.
    // (Not until none is asked for: a playing cursor asks every frame.)
    for (let round = 0; round < 2; round++) {
      if (drawPending(this.drawInFrame)) await framesDrawn();
      if (this.inFlight) await this.inFlight;
    }
    await this.finished();
  }

  /** Resolves when the GPU has finished the frames drawn so far (benchmarks). */
  async finished(): Promise<void> {
    // A lost device (its instance gone) rejects: its frames will never finish, and lost() redraws.
    await this.gpu?.painter.device.queue.onSubmittedWorkDone().catch(() => undefined);
  }

  destroy(): void {
    this.destroyed = true;
    cancelDraw(this.drawInFrame);
    this.scene?.release(true);
    this.gpu?.painter.device.destroy();
    this.gpu = null;
  }

  private drawGpu(gpu: Gpu): void {
    gpu.painter.paint(gpu.context.getCurrentTexture().createView(), this.scene, this.view);
    const start = performance.now();
    const done: Promise<void> = gpu.painter.device.queue.onSubmittedWorkDone().then(
      // For benchmarks: how long the GPU took over the frame (on SwiftShader, most of a first view).
      () => measure('splitscope:map-gpu', start),
      () => undefined, // a lost device: lost() draws again on the next one
    ).then(() => {
      if (this.inFlight !== done) return;
      this.inFlight = null;
      if (this.owed) {
        this.owed = false;
        this.invalidate();
      }
    });
    this.inFlight = done;
  }

  private drawCanvas2d(): void {
    const ctx = this.ctx2d;
    if (!ctx) return;
    const v = this.view;
    ctx.setTransform(v.dpr, 0, 0, v.dpr, 0, 0);
    ctx.clearRect(0, 0, v.width, v.height);
    const hatches: (CanvasPattern | null | undefined)[] = [undefined, undefined];
    this.rects((r) => {
      ctx.fillStyle = r.dimmed ? DIMMED_CSS[r.palette]! : PALETTE[r.palette]!.css;
      ctx.fillRect(r.left, r.top, r.width, r.height);
      if (r.oversize) {
        const k = r.dimmed ? 1 : 0;
        const hatch = (hatches[k] ??= hatchPattern(ctx, r.dimmed));
        if (hatch) {
          ctx.fillStyle = hatch;
          ctx.fillRect(r.left, r.top, r.width, r.height);
        }
      }
    });
  }

  /** The rectangles of the current view in CSS px, as drawn (for Canvas 2D and for exports). */
  rects(each: (r: MapRect) => void): void {
    if (this.scene) visibleRects(this.scene, this.view, each);
  }

  private lost(info: GPUDeviceLostInfo): void {
    if (this.destroyed) return;
    // Destroyed, and not by this renderer (destroy() marks it first): Chromium destroys a WebGPU canvas's
    // device where it cannot present it (software compositing, as with SwiftShader's WebGPU without its
    // Vulkan). The canvas stays blank, so the map goes to Canvas 2D; another device would go the same way.
    if (info.reason === 'destroyed') {
      this.gpu = null;
      this.options.failed?.(CANNOT_PRESENT, true);
      return;
    }
    // Driver reset or GPU process crash: a new device on the same canvas, the instances uploaded again.
    this.gpu = null;
    void acquire(this.canvas, (next) => this.lost(next)).then(
      (gpu) => {
        if (this.destroyed) {
          gpu?.painter.device.destroy();
          return;
        }
        if (!gpu) {
          this.options.failed?.(`the GPU device was lost (${info.message}) and no new one could be made`, false);
          return;
        }
        // Buffers of the lost device are gone: every level uploads again when next drawn.
        this.scene?.release(false);
        this.gpu = gpu;
        this.inFlight = null;
        this.owed = false;
        this.invalidate();
      },
      (e: unknown) => this.options.failed?.(String(e), false),
    );
  }
}

/** The oversize hatching's tile, in the hatch colour (dimmed, as the shader dims a hatched block a selection leaves unmarked). */
function hatchPattern(ctx: CanvasRenderingContext2D, dimmed: boolean): CanvasPattern | null {
  const tile = document.createElement('canvas');
  tile.width = tile.height = 7;
  const t = tile.getContext('2d');
  if (!t) return null;
  t.strokeStyle = dimmed ? DIMMED_CSS[HATCH_COLOR]! : PALETTE[HATCH_COLOR]!.css;
  t.lineWidth = 2;
  t.beginPath();
  t.moveTo(0, 7);
  t.lineTo(7, 0);
  t.stroke();
  return ctx.createPattern(tile, 'repeat');
}
