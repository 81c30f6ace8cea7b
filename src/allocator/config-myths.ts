// Polite corrections for things people commonly believe about PYTORCH_CUDA_ALLOC_CONF, for the
// moment they type them.
import { formatSize } from './format-size';

/** Corrections for what `text` (a config being typed) suggests its author believes. */
export function configMyths(text: string): string[] {
  const out: string[] = [];
  if (/PYTORCH_CUDA_ALLOC_CONF_\d+|CUDA_ALLOC_CONF_(DEVICE|GPU)/i.test(text)) {
    out.push(
      'There is no per-device PYTORCH_CUDA_ALLOC_CONF_0 (or _1, …): PyTorch reads the one PYTORCH_CUDA_ALLOC_CONF ' +
        'variable once per process, and its settings apply to every GPU of that process. To give GPUs different ' +
        'settings, run them in different processes.',
    );
  }
  if (/PluggableAllocator/i.test(text)) {
    out.push(
      'A custom allocator is not plugged in by subclassing CUDAPluggableAllocator in Python: you compile malloc and ' +
        'free functions into a shared library, load it with torch.cuda.memory.CUDAPluggableAllocator(path, ' +
        "'my_malloc', 'my_free') and pass that to torch.cuda.memory.change_current_allocator() before the first CUDA " +
        'allocation. It replaces the caching allocator that splitscope models; its settings do not apply then.',
    );
  }
  return out;
}

/**
 * max_split_size_mb is read as a limit on request size; it is not one. Said when the setting is below
 * the source's largest request, unless it is the setting splitscope
 * itself suggested (whoever took the suggestion was not under that belief).
 */
export function maxSplitIsNoCap(maxSplitSize: number, largestRequest: number, suggested: number | null = null): string | null {
  if (!Number.isFinite(maxSplitSize) || largestRequest <= maxSplitSize || maxSplitSize === suggested) return null;
  return (
    `max_split_size_mb does not cap the size of a request: requests over ${formatSize(maxSplitSize)} are still allocated ` +
    `(this source's largest is ${formatSize(largestRequest)}). It only keeps cached blocks of ${formatSize(maxSplitSize)} or more ` +
    'from being split for smaller requests.'
  );
}
