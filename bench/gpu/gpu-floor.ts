// The floor a GPU's memory sets under a stressed live run: the bytes its kernels must move over the
// whole run (verify the blocks each batch freed, fill the blocks it made, run their ops, verify the
// sweep's share of the live blocks, and every live block at the end) at the bandwidths measured for
// those kernels. No launch, submission or CPU time counts, so
// no live run at that batch size, on that GPU, can be faster. Plans the run here (pure bookkeeping).
import { GiB } from '../../src/allocator/constants';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { WORD_BYTES } from '../../src/gpu/stress/arena-layout';
import { SPAN_U32S } from '../../src/gpu/stress/block-spans';
import { OP_U32S, StressRun } from '../../src/gpu/stress/stress-run';
import { transformerTraining } from '../../src/trace/stream/workloads';

// A 40 GB card: the transformer's live blocks then fill most of the arena, so fixed per-dispatch costs
// weigh on the block kernels no more than on the whole-arena ones.
export const STRESS_DEVICE_BYTES = 40 * GiB;

/** GB/s (1e9 bytes/s) of each kernel, as measured. */
interface KernelRates {
  fill: number;
  op: number;
  verify: number;
}

export interface GpuFloor {
  requests: number;
  batches: number;
  /** Bytes verify reads in an average batch. */
  verifyBytesPerBatch: number;
  /** The most requests/s the kernels' bytes allow. */
  perSecond: number;
}

/** The words a span table (fill's, verify's) covers: each entry's count. */
export function spanWords(table: Uint32Array): number {
  let words = 0;
  for (let c = 1; c < table.length; c += SPAN_U32S) words += table[c]!;
  return words;
}

/** The words an op table moves: each op reads min(input, output) words and writes the output's. */
export function opWords(ops: Uint32Array): number {
  let words = 0;
  for (let e = 0; e < ops.length; e += OP_U32S) words += ops[e + 1]! + Math.min(ops[e + 1]!, ops[e + SPAN_U32S + 1]!);
  return words;
}

/** `f`: the kernels' rates and the arena they were measured on. */
export function gpuFloor(f: KernelRates & { arenaBytes: number }, batch: number): GpuFloor {
  const { arenaBytes, ...rates } = f;
  const run = new StressRun(transformerTraining.generate({}), { config: DEFAULT_CONFIG, deviceBytes: STRESS_DEVICE_BYTES, arenaWords: Math.floor(arenaBytes / WORD_BYTES) });
  let verify = 0;
  let fill = 0;
  let op = 0;
  let batches = 0;
  while (!run.done) {
    const plan = run.step(batch);
    batches++;
    verify += spanWords(plan.freed) + spanWords(plan.verify);
    fill += spanWords(plan.fill);
    op += opWords(plan.op);
  }
  verify += spanWords(run.closing().verify);
  const seconds = (WORD_BYTES * verify) / (rates.verify * 1e9) + (WORD_BYTES * fill) / (rates.fill * 1e9) + (WORD_BYTES * op) / (rates.op * 1e9);
  const requests = run.stream.length;
  return { requests, batches, verifyBytesPerBatch: (WORD_BYTES * verify) / batches, perSecond: requests / seconds };
}
