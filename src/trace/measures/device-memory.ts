// The whole GPU at one moment as each tool sees it: what nvidia-smi counts as used (the CUDA context,
// other processes and everything PyTorch reserved), what torch.cuda.memory_allocated() and
// memory_reserved() return, and how the cached part splits.
import { BlockState, type MemoryLayout } from './memory-layout';

export interface DeviceMemory {
  total: number;
  /** The memory-fraction cap, if any: PyTorch may reserve no more. */
  allowed: number | null;
  /** The CUDA context and other processes (an estimate the user sets). */
  other: number;
  /** torch.cuda.memory_allocated(). */
  allocated: number;
  /** torch.cuda.memory_reserved() = allocated + cachedSplit + cachedWhole. */
  reserved: number;
  /** Cached free bytes in segments that also hold allocations: only their own sizes can reuse them. */
  cachedSplit: number;
  /** Cached free bytes in wholly free segments (or mapped ranges): empty_cache() would return them. */
  cachedWhole: number;
  /** What nvidia-smi shows used: other + reserved. */
  nvidiaSmiUsed: number;
  /** Neither PyTorch's nor anyone else's (under a cap: what PyTorch may still reserve). */
  free: number;
}

export function deviceMemory(
  stats: Record<string, number>,
  layout: MemoryLayout,
  total: number,
  other: number,
  allowed: number | null = null,
): DeviceMemory {
  const allocated = stats['allocated_bytes.all.current'] ?? 0;
  const reserved = stats['reserved_bytes.all.current'] ?? 0;
  let cachedWhole = 0;
  for (let i = 0; i < layout.blockState.length; i++) {
    if (layout.blockState[i] === BlockState.freeSegment) cachedWhole += layout.blockSize[i]!;
  }
  return {
    total,
    allowed,
    other,
    allocated,
    reserved,
    cachedSplit: reserved - allocated - cachedWhole,
    cachedWhole,
    nvidiaSmiUsed: other + reserved,
    free: Math.max(0, allowed !== null ? Math.min(allowed - reserved, total - other - reserved) : total - other - reserved),
  };
}
