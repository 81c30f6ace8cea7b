// The classic fragmentation pattern: big tensors and small ones allocated in turn, the big ones
// freed every step while the small ones live a few steps longer. The next step's big tensors differ
// a little in size, so the allocator splits cached big blocks to serve them, and small tensors then
// land in the remainders, pinning them between free space no big request can use. With
// max_split_size_mb below the big size, big blocks are never split and the pattern goes away.
//
// Only large-pool sizes (over 1 MiB) can pin big blocks: a request of 1 MiB or less goes to the
// small pool's own 2 MiB segments, so the default small size is a few MiB, not KiB.

import { MiB } from '../../../allocator/constants';
import { formatSize } from '../../../allocator/format-size';
import { Prng } from './prng';
import { TensorTracker } from './tensor-tracker';
import { resolveParams, SEED_PARAM, type Workload } from './workload';

export const bigSmallAlternation: Workload = {
  id: 'big-small',
  name: 'Big/small alternation',
  description:
    'Big tensors (half to full "big size") alternate with small ones; the big ones are freed every ' +
    'step and the small ones live one to three steps, so they pin the remainders of split big blocks.',
  params: [
    { key: 'bigSize', label: 'Big size', default: 128 * MiB, min: 2 * MiB, max: 8192 * MiB, integer: true, unit: 'bytes', log: true, help: 'largest big tensor; each is drawn between half this and this' },
    { key: 'smallSize', label: 'Small size', default: 2 * MiB, min: 512, max: 256 * MiB, integer: true, unit: 'bytes', log: true, help: 'typical small tensor (0.75x to 1.5x this); at 1 MiB or less they go to the small pool and cannot pin big blocks' },
    { key: 'pairs', label: 'Pairs per step', default: 32, min: 1, max: 1024, integer: true, unit: 'count', help: 'big/small pairs allocated each step' },
    { key: 'steps', label: 'Steps', default: 60, min: 1, max: 5000, integer: true, unit: 'steps', help: 'rounds of allocation; big tensors are freed at the end of each' },
    SEED_PARAM,
  ],
  generate(given) {
    const p = resolveParams(bigSmallAlternation, given);
    const rng = new Prng(p.seed!);
    const t = new TensorTracker();
    // Small tensors by the step at whose end they die.
    const dying: number[][] = Array.from({ length: p.steps! + 3 }, () => []);
    for (let step = 0; step < p.steps!; step++) {
      t.markStep();
      const bigs: number[] = [];
      for (let j = 0; j < p.pairs!; j++) {
        const big = t.alloc(p.bigSize! * rng.uniform(0.5, 1), bigs.length > 0 ? bigs[bigs.length - 1]! : -1);
        bigs.push(big);
        // A small result of the big op (a norm, an index, a loss term) that outlives it.
        dying[step + rng.int(0, 2)]!.push(t.alloc(p.smallSize! * rng.uniform(0.75, 1.5), big));
      }
      for (const big of bigs) t.free(big);
      for (const small of dying[step]!) t.free(small);
    }
    return t.finish(
      `Big/small alternation: ${p.pairs} pairs per step of big tensors up to ${formatSize(p.bigSize!)} and small ` +
        `ones around ${formatSize(p.smallSize!)}, ${p.steps} steps, seed ${p.seed}`,
    );
  },
};
