// Seek: the worker's part of a jump to any request (the allocator there from the nearest checkpoint,
// then the view's stats, fragmentation and layout), on the traces of issue 13, backwards too.
// Goal: under 5 ms. Also what the checkpoints cost: the time to make them all (the worker does it in
// slices after a replay) and the heap they hold.
import { readFileSync } from 'node:fs';
import { fragmentation } from '../src/trace/measures/fragmentation';
import { memoryLayout } from '../src/trace/measures/memory-layout';
import { ReplayCursor } from '../src/trace/replay/replay';
import { planSnapshotReplay } from '../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile } from '../src/trace/snapshot/snapshot-file';
import { fixture, median, report } from './harness';

const TRACES: [file: string, conf?: string][] = [
  ['train_gpt2-n12__default.pickle.gz'],
  ['real/llama__default.pickle.gz'],
  ['train_gpt2-n150__default.pickle.gz'],
  ['random-s3__default.pickle.gz'],
  ['real/generate__default__seed6.pickle.gz'],
  // The slider's lowest setting: 5k segments, so checkpoints spaced by their size (trace/replay/replay.ts).
  ['train_gpt2-n150__default.pickle.gz', 'max_split_size_mb:20'],
];
/** The first seeks also compile the code that restores checkpoints: reported apart. */
const FIRST = 10;
const SEEKS = 100;

const heapMB = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.ceil(0.95 * xs.length) - 1]!;

export function benchSeek(): void {
  for (const [file, conf] of TRACES) {
    const plan = planSnapshotReplay(decodeSnapshotFile(readFileSync(fixture(file))), conf ? { conf } : {});
    const n = plan.stream.length;
    let cursor: ReplayCursor | null = new ReplayCursor(plan.stream, plan.replayOptions);
    const t0 = performance.now();
    while (!cursor.warm(cursor.every * 4));
    const warmMs = performance.now() - t0;
    // Random requests, in random order (a seeded LCG: the same jumps every run).
    let seed = 12345;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const total: number[] = [];
    const allocatorPart: number[] = [];
    let back = 0;
    let last = 0;
    for (let s = 0; s < FIRST + SEEKS; s++) {
      const at = Math.floor(rand() * n);
      if (at < last && s >= FIRST) back++;
      last = at;
      const t = performance.now();
      const allocator = cursor.at(at);
      allocatorPart.push(performance.now() - t);
      allocator.memoryStats();
      fragmentation(allocator);
      memoryLayout(allocator, (id) => id, ['']);
      total.push(performance.now() - t);
    }
    const every = cursor.every;
    const { checkpoints } = cursor.checkpointsHeld;
    const held = heapMB();
    cursor = null;
    const heldMB = held - heapMB();
    const first = total.slice(0, FIRST);
    const rest = total.slice(FIRST);
    report(`seek, worker's part: ${file}${conf ? ` under ${conf}` : ''} (${n.toLocaleString('en-US')} requests, a checkpoint every ${every.toLocaleString('en-US')} or more)`, {
      [`${SEEKS} random seeks (${back} backwards): median ms`]: median(rest).toFixed(2),
      'p95 ms': p95(rest).toFixed(2),
      'of which the allocator there: median, p95 ms': `${median(allocatorPart.slice(FIRST)).toFixed(2)}, ${p95(allocatorPart.slice(FIRST)).toFixed(2)}`,
      'max ms': Math.max(...rest).toFixed(2),
      [`the ${FIRST} seeks before (code still compiling): median, max ms`]: `${median(first).toFixed(2)}, ${Math.max(...first).toFixed(2)}`,
      ...(conf
        ? { '(no goal: the default settings are judged)': '' }
        : { 'goal: under 5 ms (median and p95)': median(rest) < 5 && p95(rest) < 5 ? 'met' : 'NOT met' }),
      [`making every checkpoint (${checkpoints}; ms)`]: warmMs.toFixed(0),
      'heap the cursor and its checkpoints hold (MB)': heldMB.toFixed(1),
    });
  }
}
