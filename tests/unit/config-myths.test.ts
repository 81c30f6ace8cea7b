// Corrections for common beliefs about PYTORCH_CUDA_ALLOC_CONF, shown where they are typed.
import { describe, expect, test } from 'vitest';
import { configMyths, maxSplitIsNoCap, maxSplitWithExpandable } from '../../src/allocator/config-myths';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { replay } from '../../src/trace/replay/replay';
import { replayNotes } from '../../src/trace/replay/replay-snapshot';
import { RequestStreamBuilder } from '../../src/trace/stream/request-stream';

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

describe('max_split_size_mb with expandable_segments:True (pytorch/pytorch#123548)', () => {
  // The reproducer: each cycle allocates 91 MiB and 45.5 MiB, then 2 MiB that stays alive,
  // then frees the first two. Reported on a real card: reserved grows ~138 MiB a cycle under both
  // settings (220, 2,980, 5,760 ... MiB every 20 cycles) while either alone stays under 500 MiB.
  const cycles = (n: number, conf: string) => {
    const b = new RequestStreamBuilder();
    for (let c = 0; c < n; c++) {
      const [x, y, keep] = [b.newId(), b.newId(), b.newId()];
      b.alloc(x, 91 * MiB, 0);
      b.alloc(y, 45.5 * MiB, 0);
      b.alloc(keep, 2 * MiB, 0);
      b.free(x, 91 * MiB, 0);
      b.free(y, 45.5 * MiB, 0);
    }
    return replay(b.finish(), { config: parseAllocConf(conf).config, addresses: 'simulated', statsOnly: true });
  };
  test('the replay grows reserved memory as 2.11 does, and says why', () => {
    const reserved = (n: number, conf: string) => cycles(n, conf).stats['reserved_bytes.all.current']! / MiB;
    const both = 'max_split_size_mb:128,expandable_segments:True';
    const perCycle = (reserved(101, both) - reserved(21, both)) / 80;
    expect(perCycle).toBeGreaterThan(130);
    expect(perCycle).toBeLessThan(145);
    for (const alone of ['expandable_segments:True', 'max_split_size_mb:128', '']) expect(reserved(101, alone)).toBeLessThan(500);
    expect(replayNotes(cycles(3, both)).join(' ')).toMatch(/max_split_size_mb with expandable_segments:True: PyTorch 2\.11 keeps free blocks of 128\.00 MiB or more .*pytorch\/pytorch#123548/);
    expect(replayNotes(cycles(3, 'expandable_segments:True'))).toEqual([]);
    expect(maxSplitWithExpandable(parseAllocConf('max_split_size_mb:128').config)).toBeNull();
  });
});
