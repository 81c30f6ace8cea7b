// Size prediction held against real programs run at every size (tests/fixtures/sizes: a transformers Llama
// by batch and by sequence length, torchvision's resnet50, timm's ViT-B/16; recorded on the device under
// the defaults, expandable_segments:True and max_split_size_mb:128, and under a cap). Each is predicted
// from two of its recordings (its 2nd and 4th sizes, under the defaults) and replayed under each config.
// The goals of issue 34: peak reserved within 3% inside the recorded range and 5% up to 2x beyond it,
// peak allocated within 1%, the cudaMalloc count within 5%; under a cap the real run's OOM verdict and
// its first OOM within 1% of the run's requests; `predict --fit` the largest size the program ran at.
import { describe, expect, test } from 'vitest';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { grouped } from '../../src/lib/grouped';
import { withoutCudnnWorkspaces } from '../../src/trace/predict/size-fit';
import { replay } from '../../src/trace/replay/replay';
import { accuracyRows, capRows, CONFS, fitRows, predictorOf, PROGRAMS, recordingOf, SIZES, type AccuracyRow } from './size-recordings';

// Where the goal is missed, by how much, and why: held here so a change that widens a miss, or mends
// it, is seen.
const KNOWN_MISSES: Record<string, { fitOff: number; why: string }> = {
  // The real run at 45 finished under the 2,333 MiB cap, reserved 2,330 MiB at its peak, having survived
  // 41 OOMs of cuDNN workspaces (PyTorch runs another engine config). The predicted run at 45 needs 0.5%
  // more than the cap, and fits with its workspaces left out: `--fit` says so.
  'resnet under the defaults, capped at 2,333 MiB': { fitOff: 1, why: "which algorithms cuDNN picks at 45, which recordings at 16 and 32 cannot tell, decide it" },
  // The real run at 14 peaked at 2,404 MiB under the 2,424 MiB cap; the predicted run at 14 needs 0.2%
  // more than the cap: inside ViT's error (up to 0.5% at 12, inside the recorded sizes). `--fit` says so.
  'vit under the defaults, capped at 2,424 MiB': { fitOff: 1, why: 'the prediction is 0.2% short of the real run there' },
};

const name = (r: { program: string; size: number; conf: string }): string => `${r.program} at ${r.size} under ${r.conf || 'the defaults'}`;

describe('a run predicted from two recordings, against the real run at that size', () => {
  test('the recordings cover three programs at five sizes or more, batch and sequence length, three configs', () => {
    expect(PROGRAMS.length).toBeGreaterThanOrEqual(4);
    expect(new Set(SIZES.traces.map((t) => t.size_kind))).toEqual(new Set(['batch', 'sequence']));
    for (const p of PROGRAMS) expect(SIZES.sizes[p]!.length).toBeGreaterThanOrEqual(5);
  });

  const rows: AccuracyRow[] = accuracyRows();
  test.each(rows.map((r) => [name(r), r] as const))('%s', (_, r) => {
    const reservedGoal = r.beyond === 1 ? 3 : 5;
    expect(r.beyond).toBeLessThanOrEqual(2);
    const [reserved, allocated, cudaMalloc] = r.error.map(Math.abs);
    expect({ reserved: reserved! <= reservedGoal, allocated: allocated! <= 1, cudaMalloc: cudaMalloc! <= 5, ...r }).toMatchObject({ reserved: true, allocated: true, cudaMalloc: true });
  });

  // What a prediction cannot tell is which algorithm cuDNN picks for each convolution at a size never
  // recorded, and with it the workspace: with the workspaces left out on both sides, resnet50's predicted
  // runs replay as the real ones do, figure for figure, at every size and under every config.
  test.each(SIZES.sizes['resnet']!.map((size) => [size] as const))('resnet at %i without its cuDNN workspaces: the real run, to the byte', (size) => {
    const real = withoutCudnnWorkspaces(recordingOf('resnet', size).stream);
    const predicted = withoutCudnnWorkspaces(predictorOf('resnet').at(size).stream);
    expect(real.cudnnWorkspaces.size).toBeGreaterThan(300);
    for (const conf of CONFS) {
      const figures = (s: typeof real) => {
        const { stats } = replay(s, { config: parseAllocConf(conf).config, addresses: 'simulated', statsOnly: true });
        return ['reserved_bytes.all.peak', 'allocated_bytes.all.peak', 'num_device_alloc'].map((k) => stats[k]);
      };
      expect([conf, figures(predicted)]).toEqual([conf, figures(real)]);
    }
  });
});

describe('under a cap', () => {
  const rows = capRows();
  test('some real runs ran out of memory under the cap and some did not', () => {
    expect(rows.some((r) => r.real !== null)).toBe(true);
    expect(rows.some((r) => r.real === null)).toBe(true);
  });
  test.each(rows.map((r) => [name(r), r] as const))('%s: the same verdict, the first OOM at the same request', (_, r) => {
    expect(r.predicted === null).toBe(r.real === null);
    if (r.real !== null) expect(Math.abs(r.predicted! - r.real)).toBeLessThanOrEqual(0.01 * r.requests);
  });
});

test('predict --fit finds the largest size the real program ran at under the cap (the next one ran out)', async () => {
  const rows = await fitRows();
  // Each program under the cap its sizes were recorded under, and under the others where the device's
  // search bracketed the largest size that fit (and the next one did not).
  expect(rows.length).toBeGreaterThanOrEqual(2 * PROGRAMS.length + 5);
  for (const r of rows) {
    const miss = KNOWN_MISSES[`${r.program} under ${r.conf || 'the defaults'}, capped at ${grouped(Math.round(r.cap / 2 ** 20))} MiB`];
    expect([r, Math.abs(r.predicted! - r.real!)]).toEqual([r, miss?.fitOff ?? 0]);
    // A miss is one `--fit` owns up to: the real largest is the first size that runs out, and it needs
    // under 1% more than the cap (resnet's fits with its cuDNN workspaces left out).
    if (miss) {
      expect(r.firstFailing).toBe(r.real);
      expect(r.firstFailingNeeds! / r.cap).toBeLessThan(1.01);
    }
    if (r.program === 'resnet' && miss) expect(r.firstFailingFitsWithoutWorkspaces).toBe(true);
  }
}, 120_000);
