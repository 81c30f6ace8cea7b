// Corrections for common beliefs about PYTORCH_CUDA_ALLOC_CONF, shown where they are typed.
import { describe, expect, test } from 'vitest';
import { configMyths, maxSplitIsNoCap } from '../../src/allocator/config-myths';

const MiB = 2 ** 20;

describe('configMyths', () => {
  test('per-device variables do not exist', () => {
    expect(configMyths('PYTORCH_CUDA_ALLOC_CONF_1=max_split_size_mb:128')[0]).toMatch(/no per-device PYTORCH_CUDA_ALLOC_CONF_0/);
  });
  test('CUDAPluggableAllocator is not subclassed in Python', () => {
    expect(configMyths('class Mine(torch.cuda.memory.CUDAPluggableAllocator)')[0]).toMatch(/not plugged in by subclassing/);
  });
  test('a plain config believes nothing wrong', () => {
    expect(configMyths('max_split_size_mb:128,expandable_segments:True')).toEqual([]);
  });
});

describe('maxSplitIsNoCap', () => {
  test('said when the largest request is above max_split_size, in words that read as a sentence', () => {
    expect(maxSplitIsNoCap(128 * MiB, 640 * MiB)).toBe(
      'max_split_size_mb does not cap the size of a request: requests over 128.00 MiB are still allocated ' +
        "(this source's largest is 640.00 MiB). It only keeps cached blocks of 128.00 MiB or more from being split for smaller requests.",
    );
  });
  test('silent when unlimited, when every request is at or below it, and for the setting splitscope suggested', () => {
    expect(maxSplitIsNoCap(Infinity, 640 * MiB)).toBeNull();
    expect(maxSplitIsNoCap(1024 * MiB, 640 * MiB)).toBeNull();
    expect(maxSplitIsNoCap(640 * MiB, 640 * MiB)).toBeNull();
    expect(maxSplitIsNoCap(128 * MiB, 640 * MiB, 128 * MiB)).toBeNull();
  });
});
