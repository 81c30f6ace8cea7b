// A request stream stepped through the allocator in batches, planning the GPU work of each batch, in
// queue order: verify the blocks it freed (their last check: its fills may reuse their words), fill
// the blocks it allocated, run the workload's ops on them, then verify a rolling share of every live
// block (verify-table.ts), so that words a block lost to another are found when the block is freed
// or swept, whichever comes first; `closing()` verifies every live block where a run stops. Pure
// bookkeeping (no WebGPU), so Node tests can check the plans; stress-kernels.ts runs them.
import { CachingAllocator } from '../../allocator/caching-allocator';
import type { Block } from '../../allocator/block';
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { driverPlacementFor } from '../../allocator/placement/driver-placement';
import { adoptInitialState } from '../../trace/replay/initial-state';
import { RequestKind, type RequestStream } from '../../trace/stream/request-stream';
import { ArenaLayout } from './arena-layout';
import { blockSpans, SPAN_U32S, NO_SPANS } from './block-spans';
import { FramedPlacement } from '../../allocator/placement/framed-placement';
import { PhysicalFrames } from '../../allocator/placement/physical-frames';
import { VerifyTable } from './verify-table';

/** u32s per op entry: output span (start, count, tag, first), then the input span it reads. */
export const OP_U32S = 8;

export interface StressRunOptions {
  config: AllocatorConfig;
  /** The simulated GPU's memory: the allocator cannot reserve more, and the arena mirrors it. */
  deviceBytes: number;
  /** A tighter memory-fraction cap, if any. */
  capacity?: Capacity;
  arenaWords: number;
  /** False: run the allocator only and plan no GPU work (GPU stress off). Default true. */
  plan?: boolean;
}

/** The GPU work for one batch of requests, in the order the GPU runs it. */
export interface BatchPlan {
  /** Spans of the blocks the batch freed that earlier batches filled: verified before any fill. */
  freed: Uint32Array<ArrayBuffer>;
  /** Spans of the blocks allocated in the batch and still live at its end. */
  fill: Uint32Array<ArrayBuffer>;
  /** Op entries: each span of a new block, paired with a span of the block its op reads. */
  op: Uint32Array<ArrayBuffer>;
  /** Spans of live blocks verified after the ops: the sweep's share, or every live block. */
  verify: Uint32Array<ArrayBuffer>;
  /** Blocks the plan verifies (freed ones, and those whose first span the sweep reads). */
  verifyBlocks: number;
}

interface LiveBlock {
  block: Block;
  spans: readonly number[];
  /** Where its spans start in the verify table (-1: it has none). */
  entry: number;
  /** The logical id of the block its op reads (-1: none); read by the batch that allocated it. */
  input: number;
}

export class StressRun {
  readonly allocator: CachingAllocator;
  readonly layout: ArenaLayout;
  readonly placement: FramedPlacement;
  /** Index of the next request to apply. */
  position = 0;
  /** Requests that failed with OOM in this run. */
  ooms = 0;
  /** Blocks allocated and freed inside one batch: no GPU work sees them. */
  transientBlocks = 0;
  /**
   * Test-only fault: each new block is laid over the previous live block's words, as if the
   * allocator handed out overlapping memory. Verify must then find mismatches.
   */
  faultOverlap = false;

  private readonly live = new Map<number, LiveBlock>();
  private readonly verifyTable = new VerifyTable();
  private nextTag = 1;
  private lastAllocated = -1;
  /** The batches stepped so far, and the last in which each logical id was fresh (see step). */
  private batches = 0;
  private freshIn: Int32Array;
  /** Blocks live before the first request (a trace that starts mid-run): the first batch fills them. */
  private unfilled: number[] = [];
  private readonly planning: boolean;

  constructor(
    readonly stream: RequestStream,
    options: StressRunOptions,
  ) {
    this.layout = new ArenaLayout(options.arenaWords, options.deviceBytes);
    this.freshIn = new Int32Array(stream.idCount);
    this.planning = options.plan ?? true;
    this.placement = new FramedPlacement(driverPlacementFor(stream.recordedSegments, stream.initialSegments.filter((s) => !s.expandable)), new PhysicalFrames(options.deviceBytes));
    const cap = options.capacity && options.capacity.bytes < options.deviceBytes ? options.capacity : undefined;
    this.allocator = new CachingAllocator({
      config: options.config,
      placement: this.placement,
      capacity: cap ?? { kind: 'device', bytes: options.deviceBytes },
      deviceTotal: options.deviceBytes,
    });
    for (const [blockId, block] of adoptInitialState(this.allocator, this.placement, stream).blocks) {
      this.track(blockId, block);
      this.unfilled.push(blockId);
    }
  }

  get done(): boolean {
    return this.position >= this.stream.length;
  }

  get liveBlocks(): number {
    return this.live.size;
  }

  /** Live blocks too small to own a word of the arena at its scale. */
  get wordlessBlocks(): number {
    let n = 0;
    for (const b of this.live.values()) if (b.spans.length === 0) n++;
    return n;
  }

  /** Applies up to `count` requests and plans their GPU work. */
  step(count: number): BatchPlan {
    const { kind, id, size, stream, input, pool } = this.stream;
    const end = Math.min(this.stream.length, this.position + count);
    // Blocks not yet written (allocated in this batch, or live before the first request), each once,
    // in the order they came: a set kept as the batch each id was last fresh in (a Set and a Map a
    // batch cost more than the rest of its planning).
    const batch = ++this.batches;
    const freshIn = this.freshIn;
    const fresh = this.unfilled;
    this.unfilled = [];
    for (const blockId of fresh) freshIn[blockId] = batch;
    const freed: number[] = [];
    let freedBlocks = 0;
    for (let i = this.position; i < end; i++) {
      const blockId = id[i]!;
      if (kind[i] === RequestKind.alloc) {
        const block = this.allocator.malloc(size[i]!, stream[i]!, blockId, pool[i]!);
        if (!block) {
          this.ooms++;
          continue;
        }
        const wanted = input[i]!;
        const from = wanted >= 0 && this.live.has(wanted) ? wanted : this.lastAllocated;
        this.track(blockId, block).input = from;
        if (freshIn[blockId] !== batch) {
          freshIn[blockId] = batch;
          fresh.push(blockId);
        }
      } else {
        const live = this.live.get(blockId);
        // No block: its alloc failed in this run, so the program never got a tensor to free. A deferred
        // free (record_stream) completes at once here: the arena checks where blocks are, not when.
        if (!live) continue;
        if (this.planning && freshIn[blockId] !== batch && live.spans.length > 0) {
          for (let c = 0; c < live.spans.length; c++) freed.push(live.spans[c]!);
          freedBlocks++;
        }
        this.allocator.free(live.block);
        this.untrack(blockId);
      }
    }
    this.position = end;
    if (!this.planning) return EMPTY_PLAN;
    if (this.verifyTable.sparse) this.compact();
    const newLive: LiveBlock[] = [];
    for (const blockId of fresh) {
      const live = this.live.get(blockId);
      if (live) newLive.push(live);
    }
    this.transientBlocks += fresh.length - newLive.length;
    const verify = this.verifyTable.sweep();
    return {
      freed: Uint32Array.from(freed),
      fill: concat(newLive),
      op: this.opEntries(newLive),
      verify,
      verifyBlocks: freedBlocks + blockStarts(verify),
    };
  }

  /** Work that verifies every live block (where a run stops: nothing waits for a later sweep). */
  closing(): BatchPlan {
    return { ...EMPTY_PLAN, verify: this.liveSpans(), verifyBlocks: this.live.size };
  }

  /** Work that rewrites every live block, e.g. into a new arena after a device loss. */
  rebuild(): BatchPlan {
    const all = this.liveSpans();
    return { ...EMPTY_PLAN, fill: all, verify: all, verifyBlocks: this.live.size };
  }

  /** Every live block's spans, in the order they were allocated. */
  liveSpans(): Uint32Array<ArrayBuffer> {
    this.compact();
    return this.verifyTable.entries();
  }

  /** The verify table without blanks. */
  private compact(): void {
    this.verifyTable.compact(this.live.values());
  }

  private track(blockId: number, block: Block): LiveBlock {
    const tag = this.nextTag++ >>> 0;
    const victim = this.faultOverlap ? this.live.get(this.lastAllocated) : undefined;
    const spans = !this.planning ? NO_SPANS : victim ? overlapping(victim.spans, tag) : this.spansOf(block, tag);
    const entry = spans.length > 0 ? this.verifyTable.add(spans) : -1;
    const live: LiveBlock = { block, spans, entry, input: -1 };
    this.live.set(blockId, live);
    this.lastAllocated = blockId;
    return live;
  }

  private untrack(blockId: number): void {
    const { spans, entry } = this.live.get(blockId)!;
    if (entry >= 0) this.verifyTable.remove(entry, spans.length / SPAN_U32S);
    this.live.delete(blockId);
  }

  private spansOf(block: Block, tag: number): readonly number[] {
    const segment = block.segment;
    const frames = this.placement.frames.framesOf(segment.addr);
    if (!frames) return NO_SPANS;
    return blockSpans(this.layout, frames, block.addr - segment.addr, block.size, tag);
  }

  private opEntries(blocks: readonly LiveBlock[]): Uint32Array<ArrayBuffer> {
    let n = 0;
    for (const b of blocks) n += (b.spans.length / SPAN_U32S) * OP_U32S;
    const out = new Uint32Array(n);
    let at = 0;
    for (const b of blocks) {
      const outSpans = b.spans;
      const from = b.input >= 0 ? this.live.get(b.input) : undefined;
      const inSpans = from !== undefined && from !== b ? from.spans : undefined;
      const inCount = inSpans ? inSpans.length / SPAN_U32S : 0;
      for (let c = 0, k = 0; c < outSpans.length; c += SPAN_U32S, k++) {
        for (let u = 0; u < SPAN_U32S; u++) out[at + u] = outSpans[c + u]!;
        // A block with no input (or one too small for a word) is only written: its input stays zeros.
        if (inCount > 0) {
          const j = (k % inCount) * SPAN_U32S;
          for (let u = 0; u < SPAN_U32S; u++) out[at + SPAN_U32S + u] = inSpans![j + u]!;
        }
        at += OP_U32S;
      }
    }
    return out;
  }
}

/** The blocks' spans, one after another. */
function concat(blocks: readonly LiveBlock[]): Uint32Array<ArrayBuffer> {
  let n = 0;
  for (const b of blocks) n += b.spans.length;
  const out = new Uint32Array(n);
  let at = 0;
  for (const b of blocks) {
    const spans = b.spans;
    for (let i = 0; i < spans.length; i++) out[at++] = spans[i]!;
  }
  return out;
}

const EMPTY_PLAN: BatchPlan = { freed: new Uint32Array(0), fill: new Uint32Array(0), op: new Uint32Array(0), verify: new Uint32Array(0), verifyBlocks: 0 };

/** Blocks whose first span a table holds (blank entries have no words). */
function blockStarts(table: Uint32Array): number {
  let n = 0;
  for (let c = 0; c < table.length; c += SPAN_U32S) if (table[c + 3] === 0 && table[c + 1]! > 0) n++;
  return n;
}

/** The fault: the victim's words, claimed under a new tag. */
function overlapping(victim: readonly number[], tag: number): number[] {
  const spans = victim.slice();
  for (let c = 2; c < spans.length; c += SPAN_U32S) spans[c] = tag;
  return spans;
}
