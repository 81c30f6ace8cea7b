// A workload run step by step with the allocator, the arena and the GPU: each batch of requests goes
// through the allocator, then the GPU verifies the blocks it freed, fills the new blocks, runs their
// ops and verifies the sweep's share of the live blocks, in queue order before the next batch's work
// (stress-run.ts); where the run stops (paused, stepped, done) every live block is verified. While
// playing, batches go to the GPU several to a submission, planned and submitted while the GPU runs
// the last ones and their mismatch counts come back (a few in flight, stress-kernels.ts); the
// allocator and the planning run in a planner (planner.ts), a worker on the page, which steps the next
// batches while this thread submits the last ones. It can be paused, stepped and resumed. A lost
// device is replaced and the new arena rebuilt from the allocator's state.
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import type { RequestStream } from '../../trace/stream/request-stream';
import type { GpuArena } from './gpu-arena';
import type { GpuSlot } from '../gpu-slot';
import type { BatchPlan, StressRunOptions } from './stress-run';
import { LocalPlanner, type Planned, type Planner, type PlannerState } from './planner';
import { ArenaLayout, WORD_BYTES } from './arena-layout';
import { SUBMISSIONS_IN_FLIGHT, BATCHES_PER_SUBMIT } from './stress-kernels';

export interface LiveRunOptions {
  config: AllocatorConfig;
  deviceBytes: number;
  capacity?: Capacity;
  /** Requests per batch (GPU work and verify follow every batch). */
  batch: number;
  /** Run without the GPU even when an adapter exists. */
  gpu: boolean;
  arenaBytes?: number;
}

export interface LiveRunStatus {
  position: number;
  total: number;
  playing: boolean;
  batches: number;
  ooms: number;
  liveBlocks: number;
  /** Live blocks that own no arena word at this scale (verify covers the rest). */
  wordlessBlocks: number;
  transientBlocks: number;
  adapter: string | null;
  /** Why GPU stress is off, when it is. */
  gpuOff: string | null;
  arenaBytes: number;
  /** The largest arena this adapter allows (0 without one). */
  maxArenaBytes: number;
  /** The simulated GPU's memory. */
  deviceBytes: number;
  /** Device bytes per arena byte (1 when 1:1). */
  scale: number;
  verifiedBlocks: number;
  mismatches: number;
  deviceLosses: number;
  /** Where the allocator and the planning run (see planner.ts). */
  planner: string;
}

/** Makes the planner of a run with GPU stress on (default: LocalPlanner, in this thread). */
export type PlannerFactory = (stream: RequestStream, options: StressRunOptions) => Planner;

export class LiveRun {
  readonly layout: ArenaLayout;
  playing = false;
  batches = 0;
  verifiedBlocks = 0;
  mismatches = 0;
  /** The arena the last batch ran on: a different one is blank and needs every live block rewritten. */
  private arenaSeen: GpuArena | null = null;
  private stepping: Promise<void> | null = null;
  /** The allocator's state after the batches submitted so far (the planner may be ahead). */
  private state: PlannerState;
  /** Batches the planner is stepping ahead while the last ones go to the GPU, oldest first. */
  private ahead: Promise<Planned>[] = [];
  /** The request position a rebuild of the arena covered: batches planned up to it need no GPU work. */
  private rebuiltAt = -1;
  /** Why the planner stopped, if it did. */
  private plannerError: string | null = null;
  /**
   * Batches the next submission carries. More share a submission's fixed cost (95 us on the H200,
   * 24 us a batch shared by 16: bench/results/h200-gpu.json), but a pause waits for everything in flight: so as many
   * as keep the submissions in flight under DRAIN_MS by their round trips (BATCHES_PER_SUBMIT on the
   * H200 under Dawn; one on SwiftShader, whose readbacks take 50-250 ms).
   */
  private perSubmit = 1;
  private stopped = false;
  /** The play loop under way, or winding down from a pause. */
  private loop: Promise<void> | null = null;
  /** Batches submitted whose mismatch counts are still being read back. */
  private readonly reading = new Set<Promise<void>>();
  private listeners = new Set<() => void>();

  private constructor(
    readonly stream: RequestStream,
    private readonly options: LiveRunOptions,
    private readonly slot: GpuSlot,
    private readonly planner: Planner,
    first: Planned,
    arenaWords: number,
  ) {
    this.layout = new ArenaLayout(arenaWords, options.deviceBytes);
    this.state = first.state;
  }

  /** `makePlanner` makes the planner when GPU stress is on (without it only the allocator runs, here). */
  static async create(stream: RequestStream, options: LiveRunOptions, slot: GpuSlot, makePlanner?: PlannerFactory): Promise<LiveRun> {
    const arena = options.gpu ? await slot.get() : null;
    // Without a GPU only the allocator runs (the layout is nominal, 1:1).
    const arenaWords = arena ? arena.bytes / WORD_BYTES : Math.ceil(options.deviceBytes / WORD_BYTES);
    const runOptions: StressRunOptions = {
      config: options.config,
      deviceBytes: options.deviceBytes,
      ...(options.capacity ? { capacity: options.capacity } : {}),
      arenaWords,
      plan: arena !== null,
    };
    const planner = arena && makePlanner ? makePlanner(stream, runOptions) : new LocalPlanner(stream, runOptions);
    // No batch: the state before the first request (blocks a mid-run trace starts with).
    return new LiveRun(stream, options, slot, planner, await planner.step(0, options.batch), arenaWords);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): LiveRunStatus {
    const arena = this.options.gpu ? this.slot.arena : null;
    const layout = this.layout;
    return {
      position: this.state.position,
      total: this.stream.length,
      playing: this.playing,
      batches: this.batches,
      ooms: this.state.ooms,
      liveBlocks: this.state.liveBlocks,
      wordlessBlocks: this.state.wordlessBlocks,
      transientBlocks: this.state.transientBlocks,
      adapter: arena?.context.adapter ?? null,
      gpuOff: this.plannerError ?? (this.options.gpu ? this.slot.unavailable : 'GPU stress is switched off.'),
      arenaBytes: arena?.bytes ?? 0,
      maxArenaBytes: arena?.context.maxArenaBytes ?? 0,
      deviceBytes: this.options.deviceBytes,
      scale: 1 / (layout.scale * WORD_BYTES),
      verifiedBlocks: this.verifiedBlocks,
      mismatches: this.mismatches,
      deviceLosses: this.slot.losses,
      planner: this.planner.where,
    };
  }

  /**
   * Resolves when the batches in flight now are done and their counts read back (a playing run goes
   * on); a paused run first finishes winding down, which (unless stopped) verifies every live block.
   */
  async idle(): Promise<void> {
    await this.settle();
    if (!this.playing) await this.loop;
  }

  /** Applies one batch, verifies every live block, and waits for the GPU work and counts. */
  async step(): Promise<void> {
    await this.submitSteps(1);
    await this.close();
  }

  /** Applies up to `batches` batches and submits their GPU work (waiting only while too many are in flight). */
  private submitSteps(batches: number): Promise<void> {
    this.stepping ??= this.stepMany(batches).finally(() => (this.stepping = null));
    return this.stepping;
  }

  /** Waits for the batch being submitted and every count on its way back. */
  private async settle(): Promise<void> {
    await Promise.all([this.stepping, ...this.reading]);
  }

  /** Verifies every live block (where a run stops, nothing waits for a later sweep) and waits for the counts. */
  private async close(): Promise<void> {
    await this.stepping;
    // Batches stepped ahead are in the allocator already: their GPU work goes first.
    while (this.ahead.length > 0 && !this.stopped) await this.submitSteps(0);
    if (this.options.gpu && this.batches > 0 && !this.stopped && this.plannerError === null) {
      const closing = await this.plan(() => this.planner.closing());
      if (closing) await this.onGpu(closing.plans, Infinity);
    }
    await this.settle();
  }

  /** Runs batches until paused or done; resolves then, with every count read back. */
  play(): Promise<void> {
    if (this.playing) return this.loop ?? Promise.resolve();
    this.playing = true;
    this.emit();
    // A loop still winding down from a pause ends first.
    const before = this.loop;
    const loop = (async () => {
      await before;
      await this.playLoop();
    })();
    this.loop = loop;
    void loop.finally(() => {
      if (this.loop === loop) this.loop = null;
    });
    return loop;
  }

  private async playLoop(): Promise<void> {
    let yielded = performance.now();
    while (this.playing && !this.state.done && this.plannerError === null) {
      await this.submitSteps(this.perSubmit);
      // Let the page paint and take input every few ms, not after every batch: a yield costs
      // about 40 us, as much as the allocator's part of a 64-request batch.
      if (performance.now() - yielded >= YIELD_MS) {
        await yieldToEventLoop();
        yielded = performance.now();
      }
    }
    await this.close();
    // Paused, it stopped already (and may be playing again: that loop waits for this one).
    if (this.state.done || this.plannerError !== null) this.playing = false;
    this.emit();
  }

  pause(): void {
    this.playing = false;
    this.emit();
  }

  /** Pauses for good, as when another run replaces this one: its last state goes unverified, so the switch waits only for the work in flight. */
  stop(): void {
    this.stopped = true;
    this.pause();
  }

  /** The test-only overlap fault (see StressRun.faultOverlap); the planner takes it before any later step. */
  setFault(on: boolean): void {
    void this.planner.setFault(on);
  }

  /** Up to `batches` batches (those stepped ahead, if any), submitted to the GPU; while the run plays, the next ones are stepped meanwhile. */
  private async stepMany(batches: number): Promise<void> {
    const planned = await this.plan(() => this.ahead.shift() ?? this.planner.step(batches, this.options.batch));
    if (!planned) return;
    // Two steps queued: the planner has the next one to do while an answer travels back.
    while (this.playing && !planned.state.done && !this.stopped && this.ahead.length < STEPS_AHEAD) {
      const next = this.planner.step(this.perSubmit, this.options.batch);
      next.catch(() => undefined); // a failure is seen where it is awaited, or not at all once dropped
      this.ahead.push(next);
    }
    this.state = planned.state;
    this.batches += planned.plans.length;
    if (planned.plans.length === 0) return;
    if (this.options.gpu) await this.onGpu(planned.plans, planned.state.position);
    this.emit();
  }

  /** A planner's answer; null, with the run stopped and the reason kept, if the planner failed. */
  private async plan(call: () => Promise<Planned>): Promise<Planned | null> {
    try {
      return await call();
    } catch (e) {
      this.plannerError = `The GPU stress planner stopped (${(e as Error).message ?? String(e)}): the run cannot go on.`;
      this.ahead = [];
      this.playing = false;
      this.emit();
      return null;
    }
  }

  /** Submits `plans`, which leave the allocator at request `upTo` (their work is skipped where a rebuild covered it). */
  private async onGpu(plans: BatchPlan[], upTo: number): Promise<void> {
    if (upTo <= this.rebuiltAt) return;
    const arena = await this.slot.get();
    if (!arena) return;
    if (arena.bytes / WORD_BYTES !== this.layout.arenaWords) {
      // A replacement device gave a different arena size: the layout is fixed per run, so stop GPU work.
      this.slot.unavailable = 'The GPU came back with a different arena size: GPU stress is off for this run.';
      return;
    }
    // A new device (after a loss) starts blank: rewrite every live block, as the planner has them now
    // (batches it stepped ahead included: their work is then skipped).
    let work = plans;
    if (this.arenaSeen !== null && arena !== this.arenaSeen) {
      const rebuilt = await this.plan(() => this.planner.rebuild());
      if (!rebuilt) return;
      work = rebuilt.plans;
      this.rebuiltAt = rebuilt.state.position;
    }
    this.arenaSeen = arena;
    // A device lost mid-batch fails its submission or readback: replace the device (once, though the
    // batches after it fail too); the next batch on the new one rebuilds.
    const lost = (e: unknown): void => {
      if (this.slot.arena === arena) this.slot.invalidate(String(e));
    };
    let submitted;
    let sent = 0;
    try {
      submitted = await arena.kernels.submit(work);
      sent = performance.now();
    } catch (e) {
      lost(e);
      return;
    }
    const read: Promise<void> = submitted.result.then(
      (result) => {
        for (const plan of work) this.verifiedBlocks += plan.verifyBlocks;
        // The whole round trip, the work queued ahead and the readback's latency included: it errs
        // towards small submissions (counts come back in bursts, so gaps between them would not).
        const perBatch = (performance.now() - sent) / work.length;
        this.perSubmit = Math.max(1, Math.min(BATCHES_PER_SUBMIT, Math.floor(DRAIN_MS / (SUBMISSIONS_IN_FLIGHT * perBatch))));
        this.mismatches += result.verifyMismatches + result.opMismatches;
        this.emit();
      },
      lost,
    );
    this.reading.add(read);
    void read.finally(() => this.reading.delete(read));
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }
}

/** Steps of batches the planner is asked for ahead of the GPU's submissions while a run plays. */
const STEPS_AHEAD = 2;

/** The most a pause should wait for the work in flight (see LiveRun.perSubmit). */
const DRAIN_MS = 250;

/** How long a playing run goes between yields to the event loop (half a 60 Hz frame). */
const YIELD_MS = 8;

/** Lets the page paint and take input between batches; unlike setTimeout(0), not clamped to 4 ms. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
