// Random sizes spread evenly over orders of magnitude, with random lifetimes: no structure at all,
// a baseline against which the structured workloads' fragmentation can be judged. Frees pick a
// random live tensor, and allocs outnumber frees below the target live count and vice versa, so
// the live count random-walks around the target.

import { formatSize } from '../../../allocator/format-size';
import { Prng } from './prng';
import { TensorTracker } from './tensor-tracker';
import { requireOrdered, resolveParams, SEED_PARAM, type Workload } from './workload';

/** Probability of an alloc (rather than a free) below the target live count; mirrored above it. */
const LEAN = 0.7;

export const logUniformSizes: Workload = {
  id: 'log-uniform',
  name: 'Log-uniform random sizes',
  description:
    'Sizes log-uniform between a minimum and a maximum, random frees keeping about a target number ' +
    'of tensors live; optionally spread over several streams.',
  params: [
    { key: 'minSize', label: 'Min size', default: 512, min: 1, max: 1 << 30, integer: true, unit: 'bytes', log: true, help: 'smallest request' },
    { key: 'maxSize', label: 'Max size', default: 256 * 1024 * 1024, min: 1, max: 16 * 1024 * 1024 * 1024, integer: true, unit: 'bytes', log: true, help: 'largest request; every factor of two in between is equally likely' },
    { key: 'liveTarget', label: 'Live target', default: 200, min: 1, max: 100000, integer: true, unit: 'count', help: 'number of live tensors the random frees hover around' },
    { key: 'events', label: 'Requests', default: 8000, min: 1, max: 2000000, integer: true, unit: 'count', help: 'allocs plus frees; tensors still live at the end stay live' },
    { key: 'streams', label: 'Streams', default: 1, min: 1, max: 8, integer: true, unit: 'count', help: 'CUDA streams the tensors are spread over (the allocator keeps free blocks per stream)' },
    SEED_PARAM,
  ],
  check(v) {
    requireOrdered(v, 'minSize', 'maxSize');
  },
  generate(given) {
    const p = resolveParams(logUniformSizes, given);
    const rng = new Prng(p.seed!);
    const t = new TensorTracker('events');
    const live: number[] = [];
    const streamOf: number[] = [];
    for (let i = 0; i < p.events!; i++) {
      const allocate = live.length === 0 || rng.chance(live.length < p.liveTarget! ? LEAN : 1 - LEAN);
      if (allocate) {
        const size = Math.round(rng.logUniform(p.minSize!, p.maxSize!));
        // An op reads some live tensor on its own stream while it writes the new one.
        const stream = rng.int(0, p.streams! - 1);
        const candidate = live.length > 0 ? live[rng.int(0, live.length - 1)]! : -1;
        const input = candidate >= 0 && streamOf[candidate] === stream ? candidate : -1;
        const id = t.alloc(size, input, stream);
        streamOf[id] = stream;
        live.push(id);
      } else {
        // Swap-remove a random live tensor: O(1), order of `live` does not matter.
        const j = rng.int(0, live.length - 1);
        const id = live[j]!;
        live[j] = live[live.length - 1]!;
        live.pop();
        t.free(id, streamOf[id]!);
      }
    }
    return t.finish(
      `Log-uniform sizes: ${p.events} requests of ${formatSize(p.minSize!)} to ${formatSize(p.maxSize!)} around ${p.liveTarget} ` +
        `live tensors on ${p.streams} stream(s), seed ${p.seed}`,
    );
  },
};
