// Polite corrections for things people commonly believe about PYTORCH_CUDA_ALLOC_CONF, for the
// moment they type them.
import type { AllocatorConfig } from './config';
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

/**
 * max_split_size_mb with expandable_segments:True is taken for "both fixes at once". In 2.11 the
 * oversize rule also keeps the free blocks of max_split_size or more inside an expandable segment from
 * serving smaller requests, so where a small live block fences such a block off from the segment's end,
 * each new request maps more memory: reserved grows while allocated stays small (pytorch/pytorch#123548,
 * which the replay reproduces).
 */
export function maxSplitWithExpandable(config: AllocatorConfig): string | null {
  if (!config.expandableSegments || !Number.isFinite(config.maxSplitSize)) return null;
  return (
    `max_split_size_mb with expandable_segments:True: PyTorch 2.11 keeps free blocks of ${formatSize(config.maxSplitSize)} or more ` +
    'inside expandable segments from serving smaller requests, so reserved memory can grow while allocated memory stays small ' +
    '(pytorch/pytorch#123548); this replay does the same. expandable_segments:True alone usually does better.'
  );
}
