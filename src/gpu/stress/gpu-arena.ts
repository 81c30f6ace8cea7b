// The arena: one storage buffer on an acquired device, with the kernels bound to it.
import { acquireGpu, MIN_ARENA_BYTES, type GpuContext, type GpuListener, type GpuUnavailable } from '../gpu-context';
import { StressKernels } from './stress-kernels';

export class GpuArena {
  private constructor(
    readonly context: GpuContext,
    readonly buffer: GPUBuffer,
    readonly kernels: StressKernels,
  ) {}

  /**
   * Acquires a device and an arena of `bytes` (default: the adapter's default), clamped to its
   * limits. A device that fails while the arena is made (seen in development, where React mounts
   * twice) is given one more try.
   */
  static async open(listener: GpuListener, bytes?: number): Promise<GpuArena | GpuUnavailable> {
    try {
      return await GpuArena.openOnce(listener, bytes);
    } catch {
      try {
        return await GpuArena.openOnce(listener, bytes);
      } catch (e) {
        return { adapter: null, reason: `The GPU device failed while the arena was made (${(e as Error).message}): GPU stress is off.` };
      }
    }
  }

  private static async openOnce(listener: GpuListener, bytes?: number): Promise<GpuArena | GpuUnavailable> {
    const context = await acquireGpu(listener);
    if (context.adapter === null) return context;
    const size = Math.floor(Math.min(context.maxArenaBytes, Math.max(MIN_ARENA_BYTES, bytes ?? context.defaultArenaBytes)) / 4) * 4;
    context.device.pushErrorScope('out-of-memory');
    const buffer = context.device.createBuffer({
      label: 'arena',
      size,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    const oom = await context.device.popErrorScope();
    if (oom) {
      context.device.destroy();
      return { adapter: null, reason: `The GPU could not allocate a ${size}-byte arena (${oom.message}); try a smaller one.` };
    }
    return new GpuArena(context, buffer, new StressKernels(context.device, buffer));
  }

  get bytes(): number {
    return this.buffer.size;
  }

  destroy(): void {
    this.kernels.destroy();
    this.buffer.destroy();
    this.context.device.destroy();
  }
}
