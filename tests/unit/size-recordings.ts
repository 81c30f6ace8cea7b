// Real programs recorded at several sizes on the device (tests/fixtures/sizes, scripts/device/record-sizes.py):
// what size prediction is held against. Each program's pair (its 2nd and 4th sizes, under the defaults)
// is kept as a snapshot; every other run is known by its memory_stats() at the end (the manifest), and a
// capped run that ran out of memory by its OOM dump, whose first OOM is the truth for the request a
// predicted run must fail at. Shared by tests/unit/predict-accuracy.test.ts and `npm run bench`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Capacity } from '../../src/allocator/capacity';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { predictAnswer } from '../../src/cli/predict';
import { plannedRecording } from '../../src/cli/recording-worker';
import { allocationStacks } from '../../src/trace/measures/allocation-stacks';
import type { LayoutVerdict } from '../../src/trace/predict/address-layouts';
import { SizePredictor, type SizedRecording } from '../../src/trace/predict/predict-stream';
import { replay } from '../../src/trace/replay/replay';
import type { RequestStream } from '../../src/trace/stream/request-stream';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';

/** From the repository root, where the tests and the benchmarks run. */
export const SIZES_DIR = 'tests/fixtures/sizes';

export interface SizeRun {
  file: string;
  program: string;
  size_kind: 'batch' | 'sequence';
  size: number;
  conf: string;
  stats_at_end: Record<string, number>;
  device_total: number;
  allowed_memory_maximum?: number;
  ooms: number;
}

export interface FitProbe {
  program: string;
  size: number;
  cap: number;
  conf: string;
  fits: boolean;
}

interface SizesManifest {
  sizes: Record<string, number[]>;
  caps: Record<string, number>;
  fit: FitProbe[];
  traces: SizeRun[];
}

export const SIZES: SizesManifest = JSON.parse(readFileSync(join(SIZES_DIR, 'MANIFEST.json'), 'utf8'));
export const PROGRAMS = Object.keys(SIZES.sizes);
export const CONFS = ['', 'expandable_segments:True', 'max_split_size_mb:128'];

const runOf = (program: string, size: number, conf: string, capped: boolean): SizeRun | undefined =>
  SIZES.traces.find((t) => t.program === program && t.size === size && t.conf === conf && (t.allowed_memory_maximum !== undefined) === capped);

function load(file: string): { recording: (size: number) => SizedRecording; stream: SizedRecording['stream'] } {
  const { snapshot, traces } = decodeSnapshotForReplay(gunzipSync(readFileSync(join(SIZES_DIR, file))), { details: true });
  const stream = planSnapshotReplay(snapshot, { trace: traces[0]! }).stream;
  return { stream, recording: (size) => ({ name: file, size, stream, stacks: allocationStacks(stream, traces[0]!.details, snapshot) }) };
}

/** The real run of `program` at `size` under `conf` (uncapped): its request stream. */
export const recordingOf = (program: string, size: number, conf = ''): { stream: SizedRecording['stream'] } => load(runOf(program, size, conf, false)!.file);

/** The real run of `program` at `size` (uncapped, under the defaults) as a recording to predict from. */
export const sizedRecordingOf = (program: string, size: number): SizedRecording => load(runOf(program, size, '', false)!.file).recording(size);

/** The sizes a program's prediction is made from: its 2nd and 4th. */
export const pairSizes = (program: string): [number, number] => [SIZES.sizes[program]![1]!, SIZES.sizes[program]![3]!];

const predictors = new Map<string, SizePredictor>();
export function predictorOf(program: string): SizePredictor {
  let p = predictors.get(program);
  if (!p) {
    p = new SizePredictor(pairSizes(program).map((size) => load(runOf(program, size, '', false)!.file).recording(size)));
    predictors.set(program, p);
  }
  return p;
}

/** How far `size` lies from the pair: 1 inside, else the ratio to the nearer end (below: smallest / size). */
export function beyond(program: string, size: number): number {
  const [lo, hi] = pairSizes(program);
  return size > hi ? size / hi : size < lo ? lo / size : 1;
}

const FIGURES = ['reserved_bytes.all.peak', 'allocated_bytes.all.peak', 'num_device_alloc'] as const;

export interface AccuracyRow {
  program: string;
  size: number;
  conf: string;
  beyond: number;
  /** Predicted / real - 1, in %, for peak reserved, peak allocated and the cudaMalloc count. */
  error: [number, number, number];
  predicted: number[];
  real: number[];
}

/** Every recorded size of every program under each config (the pair's own sizes too), predicted from the pair. */
export function accuracyRows(): AccuracyRow[] {
  const rows: AccuracyRow[] = [];
  for (const program of PROGRAMS) {
    for (const size of SIZES.sizes[program]!) {
      const stream = predictorOf(program).at(size).stream;
      for (const conf of CONFS) {
        const real = runOf(program, size, conf, false);
        if (!real) continue;
        const { stats } = replay(stream, { config: parseAllocConf(conf).config, addresses: 'simulated', statsOnly: true });
        const predicted = FIGURES.map((k) => stats[k]!);
        const want = FIGURES.map((k) => real.stats_at_end[k]!);
        rows.push({ program, size, conf, beyond: beyond(program, size), predicted, real: want, error: predicted.map((p, k) => (p / want[k]! - 1) * 100) as AccuracyRow['error'] });
      }
    }
  }
  return rows;
}

/**
 * Request `at` of `stream` counted without the requests of `caught` (ids whose OOM PyTorch caught: a
 * cuDNN workspace's). cuDNN tries engine config after engine config, and each attempt that does not fit
 * is a request of the recording (an oom entry) but none of the program's: a predicted run makes one.
 */
export function programRequest(stream: RequestStream, at: number, caught: ReadonlySet<number>): number {
  let n = at;
  for (let i = 0; i < at; i++) if (caught.has(stream.id[i]!)) n--;
  return n;
}

export interface CapRow {
  program: string;
  size: number;
  conf: string;
  cap: number;
  /** The real run's first OOM the program saw (the request of its OOM dump), or null when it ran through;
   * both counted without the OOMs PyTorch caught (programRequest). */
  real: number | null;
  predicted: number | null;
  /** The predicted run's requests: what "within 1% of the run's requests" is measured by. */
  requests: number;
}

/** Every size under each program's cap, under the defaults and expandable_segments:True. */
export function capRows(): CapRow[] {
  const rows: CapRow[] = [];
  for (const program of PROGRAMS) {
    for (const size of SIZES.sizes[program]!) {
      const stream = predictorOf(program).at(size).stream;
      for (const conf of CONFS.slice(0, 2)) {
        const real = runOf(program, size, conf, true);
        if (!real) continue;
        const capacity: Capacity = { kind: 'fraction', bytes: real.allowed_memory_maximum! };
        const { ooms, caught } = replay(stream, { config: parseAllocConf(conf).config, addresses: 'simulated', capacity, statsOnly: true });
        const recording = load(real.file).stream;
        const recorded = recording.recordedOoms[0];
        const caughtInRecording = new Set([...recording.failedInRecording].filter((id) => recording.cudnnWorkspaces.has(id)));
        rows.push({
          program,
          size,
          conf,
          cap: capacity.bytes,
          real: recorded === undefined ? null : programRequest(recording, recorded, caughtInRecording),
          predicted: ooms[0] ? programRequest(stream, ooms[0].request, new Set(caught.map((o) => stream.id[o.request]!))) : null,
          requests: stream.length,
        });
      }
    }
  }
  return rows;
}

export interface FitRow {
  program: string;
  conf: string;
  cap: number;
  /** --fit's first size that runs out, the cap it would need, and whether it fits with its cuDNN workspaces left out. */
  firstFailing: number | null;
  firstFailingNeeds: number | null;
  firstFailingFitsWithoutWorkspaces: boolean | null;
  /** The address layouts' verdicts at the largest size, where they split. */
  largestSplit: LayoutVerdict | null;
  /** The largest size the real program ran at under the cap, the next size failing. */
  real: number;
  predicted: number | null;
}

/** `splitscope predict --fit` (the CLI's own answer) per program, cap and config, beside the device's
 * bisection, where it bracketed the largest size that fits. */
export async function fitRows(): Promise<FitRow[]> {
  const rows: FitRow[] = [];
  const total = SIZES.traces[0]!.device_total;
  for (const program of PROGRAMS) {
    const inputs = pairSizes(program).map((size) => ({ size, file: runOf(program, size, '', false)!.file }));
    for (const asked of new Set(SIZES.fit.filter((p) => p.program === program).map((p) => p.cap))) {
      // The cap as PyTorch applied it: set_per_process_memory_fraction(asked / total) allows this many bytes.
      const cap = Math.trunc((asked / total) * total);
      const answer = await predictAnswer(inputs, { fit: true, capacity: String(cap) }, async (files) =>
        files.map((file) => plannedRecording(decodeSnapshotForReplay(gunzipSync(readFileSync(join(SIZES_DIR, file))), { details: true }))),
      );
      if (answer.kind !== 'fit') throw new Error('predict --fit answered something else');
      for (const f of answer.fits) {
        const probes = SIZES.fit.filter((p) => p.program === program && p.conf === f.conf && p.cap === asked);
        const fitting = probes.filter((p) => p.fits).map((p) => p.size);
        const largest = fitting.length ? Math.max(...fitting) : null;
        const bracketed = largest !== null && probes.some((p) => !p.fits && p.size === largest + 1);
        // A search whose upper size fit too brackets nothing: there is no real largest to hold --fit to.
        if (bracketed) rows.push({ program, conf: f.conf, cap, firstFailing: f.firstFailing, firstFailingNeeds: f.firstFailingNeeds, firstFailingFitsWithoutWorkspaces: f.firstFailingFitsWithoutWorkspaces, largestSplit: f.largestSplit, real: largest, predicted: f.largest });
      }
    }
  }
  return rows;
}
