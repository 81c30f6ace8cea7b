// GPU figures measured in one run on one adapter, wherever WebGPU is (Chromium's page, or Dawn for
// Node on the device machine): fill, op and verify throughput over a workload's live blocks beside
// plain streaming kernels over the whole arena on the same buffer, and a live run with GPU stress
// on and off. Kernel times are wall-clock around submissions of `repeat` dispatches, best of five.
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { WORD_BYTES } from '../../src/gpu/stress/arena-layout';
import { SPAN_U32S } from '../../src/gpu/stress/block-spans';
import { GpuArena } from '../../src/gpu/stress/gpu-arena';
import { BATCHES_PER_SUBMIT } from '../../src/gpu/stress/stress-kernels';
import { GpuSlot } from '../../src/gpu/gpu-slot';
import { LiveRun, type PlannerFactory } from '../../src/gpu/stress/live-run';
import { OP_U32S, StressRun, type BatchPlan } from '../../src/gpu/stress/stress-run';
import { transformerTraining } from '../../src/trace/stream/workloads';
import { median } from '../median';
import { spanWords, opWords, STRESS_DEVICE_BYTES } from './gpu-floor';

export interface GpuFigures {
  adapter: string;
  arenaBytes: number;
  liveBytes: number;
  /** GB/s (1e9 bytes/s) over the bytes each kernel touches. */
  fill: number;
  op: number;
  verify: number;
  streamWrite: number;
  streamRead: number;
  /** Bytes read plus bytes written by the plain copy (half the arena onto the other half). */
  streamCopy: number;
  fillRatio: number;
  /** Op reads one block and writes another: compared with the plain copy. */
  opRatio: number;
  verifyRatio: number;
  /** Mismatches the measurements themselves saw (must be 0: the figures double as a check). */
  mismatches: number;
  liveRun: LiveRunFigures;
  /** The same at other batch sizes (recorded since batches were pipelined). */
  liveRuns?: LiveRunFigures[];
  /** Microseconds per batch submitted alone with next to no work (one span of one word to fill,
   * touch and verify): the fixed WebGPU cost a submission pays whatever it holds (recorded since
   * December 2026). */
  batchFixedUs?: number;
  /** The same per batch when BATCHES_PER_SUBMIT such batches share each submission, as a playing run's do. */
  sharedBatchFixedUs?: number;
  batchesPerSubmit?: number;
}

export interface LiveRunFigures {
  requests: number;
  gpuOnPerSecond: number;
  gpuOffPerSecond: number;
  batch: number;
}

/** Seconds per dispatch: the best of `samples` submissions of `repeat` dispatches, after a warm-up
 * (one sample swings by a third on the H200 as clocks settle). */
async function timed(repeat: number, submit: () => Promise<unknown>, samples = 5): Promise<number> {
  await submit(); // warm-up: pipelines, first touch of the pages
  let best = Infinity;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await submit();
    best = Math.min(best, (performance.now() - t0) / 1e3 / repeat);
  }
  return best;
}

/** The live blocks at the workload's peak, as span tables for the three kernels. */
function peakTables(arenaWords: number): { spans: Uint32Array<ArrayBuffer>; ops: Uint32Array<ArrayBuffer>; words: number; opBytes: number } {
  const run = new StressRun(transformerTraining.generate({}), { config: DEFAULT_CONFIG, deviceBytes: STRESS_DEVICE_BYTES, arenaWords });
  let peak: Uint32Array<ArrayBuffer> | null = null;
  let peakWords = -1;
  while (!run.done) {
    run.step(256);
    const live = run.liveSpans();
    const words = spanWords(live);
    if (words > peakWords) [peak, peakWords] = [live, words];
  }
  const spans = peak!;
  // As in a step, new blocks are written from older ones: the newer half of the live spans (in
  // allocation order) are the ops' outputs, each reading its counterpart in the older half.
  const n = spans.length / SPAN_U32S;
  const half = Math.floor(n / 2);
  const ops = new Uint32Array((n - half) * OP_U32S);
  for (let i = half; i < n; i++) {
    const at = (i - half) * OP_U32S;
    ops.set(spans.subarray(i * SPAN_U32S, (i + 1) * SPAN_U32S), at);
    const j = (i - half) * SPAN_U32S;
    ops.set(spans.subarray(j, j + SPAN_U32S), at + SPAN_U32S);
  }
  return { spans, ops, words: peakWords, opBytes: opWords(ops) * WORD_BYTES };
}

/** Runs per live-run figure (after a warm-up run): a run with stress off lasts 15-25 ms, and its rate swings by a third. */
const LIVE_RUNS = 9;

async function liveRunRate(gpu: boolean, slot: GpuSlot, batch: number, makePlanner?: PlannerFactory): Promise<{ requests: number; perSecond: number }> {
  const stream = transformerTraining.generate({});
  const run = await LiveRun.create(stream, { config: DEFAULT_CONFIG, deviceBytes: STRESS_DEVICE_BYTES, batch, gpu }, slot, makePlanner);
  const t0 = performance.now();
  await run.play();
  const seconds = (performance.now() - t0) / 1e3;
  if (run.mismatches > 0) throw new Error(`the live run found ${run.mismatches} mismatches`);
  return { requests: stream.length, perSecond: stream.length / seconds };
}

/** `makePlanner`: where a run with stress on steps its allocator (the page's: a worker); default, this thread. */
export async function measureGpu(options: { arenaBytes?: number; repeat: number; makePlanner?: PlannerFactory }): Promise<GpuFigures> {
  const slot = new GpuSlot(options.arenaBytes);
  const arena = await slot.get();
  if (!arena) throw new Error(`no GPU: ${slot.unavailable}`);
  const { kernels } = arena as GpuArena;
  const arenaWords = arena.bytes / WORD_BYTES;
  const { spans, ops, words, opBytes } = peakTables(arenaWords);
  const r = options.repeat;
  const liveBytes = words * WORD_BYTES;
  const gbps = (bytes: number, seconds: number): number => bytes / seconds / 1e9;

  const streamWrite = gbps(arena.bytes, await timed(r, () => kernels.submitStream('streamWrite', r)));
  const streamRead = gbps(arena.bytes, await timed(r, () => kernels.submitStream('streamRead', r)));
  const streamCopy = gbps(arena.bytes, await timed(r, () => kernels.submitStream('streamCopy', r)));
  // The copy left other values behind: write the pattern again before anything checks it.
  await kernels.submitStream('streamWrite', 1);
  const fill = gbps(liveBytes, await timed(r, () => kernels.submitKernel('fill', spans, r)));
  const op = gbps(opBytes, await timed(r, () => kernels.submitKernel('touch', ops, r)));
  const verify = gbps(liveBytes, await timed(r, () => kernels.submitKernel('verify', spans, r)));
  const mismatches = (await kernels.counters()).reduce((a, b) => a + b, 0);

  const liveRuns: LiveRunFigures[] = [];
  for (const batch of [64, 16, 256]) {
    // Warmed up (the first run of each compiles the allocator and the planning), then the median
    // of LIVE_RUNS runs each, on and off alternated so that both see the machine alike.
    await liveRunRate(true, slot, batch, options.makePlanner);
    await liveRunRate(false, slot, batch);
    const on: number[] = [];
    const off: number[] = [];
    let requests = 0;
    for (let k = 0; k < LIVE_RUNS; k++) {
      const a = await liveRunRate(true, slot, batch, options.makePlanner);
      on.push(a.perSecond);
      off.push((await liveRunRate(false, slot, batch)).perSecond);
      requests = a.requests;
    }
    liveRuns.push({ requests, gpuOnPerSecond: median(on), gpuOffPerSecond: median(off), batch });
  }
  const batchFixedUs = await fixedBatchCost(kernels, 1);
  const sharedBatchFixedUs = await fixedBatchCost(kernels, BATCHES_PER_SUBMIT);
  return {
    adapter: arena.context.adapter,
    arenaBytes: arena.bytes,
    liveBytes,
    fill,
    op,
    verify,
    streamWrite,
    streamRead,
    streamCopy,
    fillRatio: fill / streamWrite,
    opRatio: op / streamCopy,
    verifyRatio: verify / streamRead,
    mismatches,
    liveRun: liveRuns[0]!,
    liveRuns: liveRuns.slice(1),
    batchFixedUs,
    sharedBatchFixedUs,
    batchesPerSubmit: BATCHES_PER_SUBMIT,
  };
}

/** The median of 5 runs of 480 batches of a one-word plan, `perSubmit` to a submission, submitted back
 * to back as a playing run does, in microseconds per batch (the uploads, the pass, the submission and
 * the counts' readback). */
async function fixedBatchCost(kernels: GpuArena['kernels'], perSubmit: number): Promise<number> {
  const span = Uint32Array.from([0, 1, 1, 0]);
  const plan: BatchPlan = { freed: new Uint32Array(0), fill: span, op: Uint32Array.from([0, 1, 1, 0, 0, 0, 0, 0]), verify: span, verifyBlocks: 1 };
  const plans = Array.from({ length: perSubmit }, () => plan);
  const batches = 480;
  const runs: number[] = [];
  for (let r = 0; r < 6; r++) {
    const t0 = performance.now();
    const results: Promise<unknown>[] = [];
    for (let i = 0; i < batches; i += perSubmit) results.push((await kernels.submit(plans)).result);
    await Promise.all(results);
    if (r > 0) runs.push(((performance.now() - t0) * 1e3) / batches);
  }
  return median(runs);
}
