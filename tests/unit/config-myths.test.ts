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
  test('said when the largest request is at or above max_split_size', () => {
    expect(maxSplitIsNoCap(128 * MiB, 640 * MiB)).toMatch(/does not cap the size of a request: .*640\.00 MiB/);
  });
  test('silent when unlimited or when every request is below it', () => {
    expect(maxSplitIsNoCap(Infinity, 640 * MiB)).toBeNull();
    expect(maxSplitIsNoCap(1024 * MiB, 640 * MiB)).toBeNull();
  });
});
