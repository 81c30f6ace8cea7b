// A workload run step by step with the allocator, the arena and the GPU: each batch of requests goes
// through the allocator, then the GPU fills the new blocks, runs their ops and verifies every live
// block, in queue order before the next batch's work. While playing, the next batch is planned and
// submitted while the GPU runs the last ones and their mismatch counts come back (a few in flight,
// stress-kernels.ts). It can be paused, stepped and resumed. A lost device is replaced and the new
// arena rebuilt from the allocator's state.
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import type { RequestStream } from '../../trace/stream/request-stream';
import type { GpuArena } from './gpu-arena';
import type { GpuSlot } from '../gpu-slot';
import { StressRun, type BatchPlan } from './stress-run';
import { WORD_BYTES } from './arena-layout';

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
}

export class LiveRun {
  readonly run: StressRun;
  playing = false;
  batches = 0;
  verifiedBlocks = 0;
  mismatches = 0;
  /** The arena the last batch ran on: a different one is blank and needs every live block rewritten. */
  private arenaSeen: GpuArena | null = null;
  private stepping: Promise<void> | null = null;
  /** Batches submitted whose mismatch counts are still being read back. */
  private readonly reading = new Set<Promise<void>>();
  private listeners = new Set<() => void>();

  private constructor(
    readonly stream: RequestStream,
    private readonly options: LiveRunOptions,
    private readonly slot: GpuSlot,
    arenaWords: number,
    planned: boolean,
  ) {
    this.run = new StressRun(stream, {
      config: options.config,
      deviceBytes: options.deviceBytes,
      ...(options.capacity ? { capacity: options.capacity } : {}),
      arenaWords,
      plan: planned,
    });
  }

  static async create(stream: RequestStream, options: LiveRunOptions, slot: GpuSlot): Promise<LiveRun> {
    const arena = options.gpu ? await slot.get() : null;
    // Without a GPU only the allocator runs (the layout is nominal, 1:1).
    const words = arena ? arena.bytes / WORD_BYTES : Math.ceil(options.deviceBytes / WORD_BYTES);
    return new LiveRun(stream, options, slot, words, arena !== null);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): LiveRunStatus {
    const arena = this.options.gpu ? this.slot.arena : null;
    const layout = this.run.layout;
    return {
      position: this.run.position,
      total: this.stream.length,
      playing: this.playing,
      batches: this.batches,
      ooms: this.run.ooms,
      liveBlocks: this.run.liveBlocks,
      wordlessBlocks: this.run.wordlessBlocks,
      transientBlocks: this.run.transientBlocks,
      adapter: arena?.context.adapter ?? null,
      gpuOff: this.options.gpu ? this.slot.unavailable : 'GPU stress is switched off.',
      arenaBytes: arena?.bytes ?? 0,
      maxArenaBytes: arena?.context.maxArenaBytes ?? 0,
      deviceBytes: this.options.deviceBytes,
      scale: 1 / (layout.scale * WORD_BYTES),
      verifiedBlocks: this.verifiedBlocks,
      mismatches: this.mismatches,
      deviceLosses: this.slot.losses,
    };
  }

  /** Resolves when the batches in flight now are done and their counts read back (a playing run goes on). */
  async idle(): Promise<void> {
    await Promise.all([this.stepping, ...this.reading]);
  }

  /** Applies one batch and waits for its GPU work and counts. */
  async step(): Promise<void> {
    await this.submitStep();
    await this.idle();
  }

  /** Applies one batch and submits its GPU work (waiting only while too many are in flight). */
  private submitStep(): Promise<void> {
    this.stepping ??= this.stepOnce().finally(() => (this.stepping = null));
    return this.stepping;
  }

  /** Runs batches until paused or done; resolves then, with every count read back. */
  async play(): Promise<void> {
    if (this.playing) return;
    this.playing = true;
    this.emit();
    let yielded = performance.now();
    while (this.playing && !this.run.done) {
      await this.submitStep();
      // Let the page paint and take input every few ms, not after every batch: a yield costs
      // about 40 us, as much as the allocator's part of a 64-request batch.
      if (performance.now() - yielded >= YIELD_MS) {
        await yieldToEventLoop();
        yielded = performance.now();
      }
    }
    await this.idle();
    this.playing = false;
    this.emit();
  }

  pause(): void {
    this.playing = false;
    this.emit();
  }

  /** The test-only overlap fault (see StressRun.faultOverlap). */
  setFault(on: boolean): void {
    this.run.faultOverlap = on;
  }

  private async stepOnce(): Promise<void> {
    if (this.run.done) return;
    const plan = this.run.step(this.options.batch);
    this.batches++;
    if (this.options.gpu) await this.onGpu(plan);
    this.emit();
  }

  private async onGpu(plan: BatchPlan): Promise<void> {
    const arena = await this.slot.get();
    if (!arena) return;
    if (arena.bytes / WORD_BYTES !== this.run.layout.arenaWords) {
      // A replacement device gave a different arena size: the layout is fixed per run, so stop GPU work.
      this.slot.unavailable = 'The GPU came back with a different arena size: GPU stress is off for this run.';
      return;
    }
    // A new device (after a loss) starts blank: rewrite every live block first.
    const work = this.arenaSeen !== null && arena !== this.arenaSeen ? this.run.rebuild() : plan;
    this.arenaSeen = arena;
    // A device lost mid-batch fails its submission or readback: replace the device (once, though the
    // batches after it fail too); the next batch on the new one rebuilds.
    const lost = (e: unknown): void => {
      if (this.slot.arena === arena) this.slot.invalidate(String(e));
    };
    let submitted;
    try {
      submitted = await arena.kernels.submit(work);
    } catch (e) {
      lost(e);
      return;
    }
    const read: Promise<void> = submitted.result.then(
      (result) => {
        this.verifiedBlocks += work.verifyBlocks;
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
