import { formatSize } from './format-size';

export interface OomFacts {
  /** The segment size the allocator failed to get (PyTorch reports alloc_size, not the request). */
  segmentSize: number;
  device: number;
  deviceTotal: number;
  deviceFree: number;
  /** Memory this process holds on the device (reserved + context), for the per-process line. */
  processBytes: number;
  /** The cap from set_per_process_memory_fraction, if one is set. */
  allowed?: number;
  allocated: number;
  reserved: number;
}

/** torch.OutOfMemoryError's text as torch 2.11 builds it in DeviceCachingAllocator::malloc. */
export function oomMessage(f: OomFacts): string {
  const allowed = f.allowed !== undefined ? `${formatSize(f.allowed)} allowed; ` : '';
  return (
    `CUDA out of memory. Tried to allocate ${formatSize(f.segmentSize)}. ` +
    `GPU ${f.device} has a total capacity of ${formatSize(f.deviceTotal)} of which ${formatSize(f.deviceFree)} is free. ` +
    `Including non-PyTorch memory, this process has ${formatSize(f.processBytes)} memory in use. ` +
    allowed +
    `Of the allocated memory ${formatSize(f.allocated)} is allocated by PyTorch, ` +
    `and ${formatSize(f.reserved - f.allocated)} is reserved by PyTorch but unallocated. ` +
    'If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True ' +
    'to avoid fragmentation.  See documentation for Memory Management  ' +
    '(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)'
  );
}
