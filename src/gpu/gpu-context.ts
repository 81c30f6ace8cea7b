// The one place that acquires WebGPU: guards for a missing API, a null adapter and limits too small
// for an arena, and the device's loss and uncaptured errors reported to one listener.
import { MiB, GiB } from '../allocator/constants';

/** Below this an arena would hold too little to say anything. */
export const MIN_ARENA_BYTES = 16 * MiB;
/** Default arena on a hardware adapter; software adapters (SwiftShader) get less, they run on the CPU. */
const DEFAULT_ARENA_BYTES = 1 * GiB;
const DEFAULT_SOFTWARE_ARENA_BYTES = 64 * MiB;

export interface GpuContext {
  device: GPUDevice;
  /** Vendor and architecture, e.g. "nvidia hopper" or "google swiftshader". */
  adapter: string;
  software: boolean;
  /** The largest arena one storage binding can hold on this device. */
  maxArenaBytes: number;
  defaultArenaBytes: number;
}

export interface GpuUnavailable {
  adapter: null;
  /** Why GPU stress is off, in words for the user. */
  reason: string;
}

export interface GpuListener {
  /** The device is gone (driver reset, GPU process crash, or destroy()); `message` is the browser's. */
  lost(message: string): void;
  /** A WebGPU validation or out-of-memory error nothing else caught. */
  error(message: string): void;
}

export async function acquireGpu(listener: GpuListener, gpu: GPU | undefined = globalThis.navigator?.gpu): Promise<GpuContext | GpuUnavailable> {
  if (!gpu) return { adapter: null, reason: 'This browser has no WebGPU: GPU stress is off (the allocator views still work).' };
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter();
  } catch (e) {
    adapter = null;
    listener.error(String(e));
  }
  if (!adapter) return { adapter: null, reason: 'WebGPU found no adapter (GPU disabled or blocklisted): GPU stress is off.' };
  const limits = adapter.limits;
  const maxArenaBytes = Math.floor(Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize) / 4) * 4;
  if (maxArenaBytes < MIN_ARENA_BYTES) {
    return { adapter: null, reason: `This GPU's storage buffers are too small for an arena (${maxArenaBytes} bytes): GPU stress is off.` };
  }
  // A device gets only 256/128 MiB buffers unless it asks for the adapter's limits.
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxBufferSize: limits.maxBufferSize,
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
    },
  });
  // Every loss is reported, destroy() included: only the owner knows whether it meant it.
  void device.lost.then((info) => listener.lost(info.message || 'the GPU device was lost'));
  device.addEventListener('uncapturederror', (event) => listener.error((event as GPUUncapturedErrorEvent).error.message));
  const info = adapter.info;
  const software = info.isFallbackAdapter || /swiftshader|llvmpipe|warp/i.test(`${info.architecture} ${info.description}`);
  const name = [info.vendor, info.architecture || info.device].filter(Boolean).join(' ') || 'unknown adapter';
  const preferred = software ? DEFAULT_SOFTWARE_ARENA_BYTES : DEFAULT_ARENA_BYTES;
  return { device, adapter: name, software, maxArenaBytes, defaultArenaBytes: Math.min(preferred, maxArenaBytes) };
}
