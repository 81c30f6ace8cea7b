// The GPU stress run on the page: which source runs (a built-in workload or the open snapshot),
// the live run itself, and GPU counters since the page loaded. It starts on the built-in
// transformer workload and plays at once, with GPU stress on whenever an adapter exists.
import { create } from 'zustand';
import { GiB } from '../allocator/constants';
import { DEFAULT_CONFIG, type AllocatorConfig } from '../allocator/config';
import { parseAllocConf } from '../allocator/config-parser';
import { H200_TOTAL_MEMORY } from '../allocator/capacity';
import { GpuSlot } from '../gpu/gpu-slot';
import { LiveRun, type LiveRunStatus } from '../gpu/stress/live-run';
import type { RequestStream } from '../trace/stream/request-stream';
import { workloadById, WORKLOADS } from '../trace/stream/workloads';
import { workerPlanner } from './planner-client';
import { currentKey, onNewSource, streamOf, useSession } from './session-store';
import { sourceKeyOf } from './view-key';

/** The stress run's source that is the page's own (the open snapshot or workload). */
export const SNAPSHOT_SOURCE = 'snapshot';
/** The simulated GPU a built-in workload runs on (an 80 GiB card); a snapshot runs on the H200 it came from. */
export const WORKLOAD_DEVICE_BYTES = 80 * GiB;
const DEFAULT_BATCH = 64;

export interface StressRequest {
  /** A workload id, or 'snapshot' for the open snapshot's requests. */
  source?: string;
  params?: Record<string, number>;
  /** Requests per batch: GPU fill, op and verify follow each batch. */
  batch?: number;
  /** Test-only: make new blocks overlap live ones from the first batch on. */
  fault?: boolean;
  gpu?: boolean;
  /** The arena's size (default: the adapter's default, clamped to its limits). */
  arenaBytes?: number;
  /** The simulated GPU's memory (default: 80 GiB for a workload, the H200's for a snapshot). */
  deviceBytes?: number;
}

interface StressState {
  source: string;
  /** The parameters the current workload runs with (as given: defaults are not filled in). */
  params: Record<string, number>;
  arenaBytes: number | null;
  deviceBytes: number | null;
  status: LiveRunStatus | null;
  error: string | null;
  /** Counted over every run since the page loaded. */
  verifiedBlocks: number;
  mismatches: number;
  start(request?: StressRequest): Promise<LiveRun | null>;
  play(): void;
  pause(): void;
  step(): Promise<void>;
}

const slot = new GpuSlot();
let run: LiveRun | null = null;
/** Counters of runs that were replaced. */
let earlier = { verifiedBlocks: 0, mismatches: 0 };
let unsubscribe: (() => void) | null = null;
/** Starts run one after another, so that the last one asked for is the one left running. */
let starting: Promise<unknown> = Promise.resolve();

function configFor(source: string): AllocatorConfig {
  const session = useSession.getState();
  // A snapshot runs under what its replay uses (recorded unless typed); a workload under what is typed.
  const text = source === SNAPSHOT_SOURCE ? (session.summary?.conf ?? '') : (session.settings.conf ?? '');
  return text ? parseAllocConf(text).config : DEFAULT_CONFIG;
}

async function streamFor(source: string, params: Record<string, number>): Promise<RequestStream> {
  if (source === SNAPSHOT_SOURCE) return streamOf(sourceKeyOf(currentKey()));
  const workload = workloadById(source);
  if (!workload) throw new Error(`There is no built-in workload "${source}"; choose one of ${WORKLOADS.map((w) => w.id).join(', ')}.`);
  return workload.generate(params);
}

function publish(): void {
  if (!run) return;
  const status = run.status();
  useStress.setState({
    status,
    verifiedBlocks: earlier.verifiedBlocks + status.verifiedBlocks,
    mismatches: earlier.mismatches + status.mismatches,
  });
}

export const useStress = create<StressState>()(() => ({
  source: WORKLOADS[0]!.id,
  params: {},
  arenaBytes: null,
  deviceBytes: null,
  status: null,
  error: null,
  verifiedBlocks: 0,
  mismatches: 0,
  start(request = {}) {
    const next = starting.then(() => startNow(request));
    starting = next.catch(() => undefined);
    return next;
  },
  play() {
    void run?.play();
  },
  pause() {
    run?.pause();
  },
  async step() {
    run?.pause();
    await run?.step();
  },
}));

async function startNow(request: StressRequest): Promise<LiveRun | null> {
  const set = useStress.setState;
  const state = useStress.getState();
  const source = request.source ?? state.source;
  // Settings not in the request carry over from the current run (a workload's params only to itself).
  const params = request.params ?? (source === state.source ? state.params : {});
  const arenaBytes = request.arenaBytes ?? state.arenaBytes;
  const deviceBytes = request.deviceBytes ?? state.deviceBytes;
  let stream: RequestStream;
  try {
    stream = await streamFor(source, params);
  } catch (e) {
    // The current run (if any) goes on: a bad request loses nothing.
    set({ error: (e as Error).message });
    return null;
  }
  if (run) {
    run.stop();
    await run.idle();
    const old = run.status();
    earlier = { verifiedBlocks: earlier.verifiedBlocks + old.verifiedBlocks, mismatches: earlier.mismatches + old.mismatches };
    unsubscribe?.();
  }
  // A new arena size replaces the arena (no run uses it now).
  slot.setArenaBytes(arenaBytes ?? undefined);
  run = await LiveRun.create(
    stream,
    {
      config: configFor(source),
      deviceBytes: deviceBytes ?? (source === SNAPSHOT_SOURCE ? H200_TOTAL_MEMORY : WORKLOAD_DEVICE_BYTES),
      batch: request.batch ?? DEFAULT_BATCH,
      gpu: request.gpu ?? true,
    },
    slot,
    workerPlanner,
  );
  run.setFault(request.fault ?? false);
  unsubscribe = run.subscribe(publish);
  set({ source, params, arenaBytes, deviceBytes, error: null });
  publish();
  return run;
}

/** Resolves when the pending GPU batch (if any) is done; a playing run is not waited for. */
export function stressIdle(): Promise<void> {
  return run?.idle() ?? Promise.resolve();
}

/** Starts the default workload: playing on the page's default view, paused under a link or a file
 * the page was launched with (its replays need the cores). */
export async function startDefaultStress(playing: boolean): Promise<void> {
  const started = await useStress.getState().start();
  if (playing) void started?.play();
}

// A snapshot opened: a stress run still playing (the built-in workload's) pauses, so that it takes no
// core from the snapshot's replays and sweeps; its panel resumes it.
onNewSource(() => {
  if (useSession.getState().sourceLink?.kind !== 'workload' && run?.status().playing) run.pause();
});

/** The GPU surface of window.splitscope. */
export function gpuReport(): { adapter: string | null; arenaBytes: number; verifiedBlocks: number; mismatches: number } {
  const { status, verifiedBlocks, mismatches } = useStress.getState();
  return { adapter: status?.adapter ?? null, arenaBytes: status?.arenaBytes ?? 0, verifiedBlocks, mismatches };
}

/** Test-only: loses the GPU device as a driver reset would; the run goes on on a new one. */
export function loseGpuForTest(): void {
  slot.simulateLoss();
}
