// What each allocation is: a parameter, a gradient, optimizer state, an activation (saved for backward),
// a temporary (freed within the phase that made it), input data, or other. From the phase its stack was
// in when it was made and the one it was freed in (request-phases.ts), and a category the program named
// in user_metadata, which wins. Each rule, with its reason:
//   made in backward, kept past it, the size gradient (AccumulateGrad's .grad lives to zero_grad, and
//   of a parameter                           has its parameter's shape and dtype); no more of a size
//                                            in one backward than there are parameters of it, those
//                                            never freed last (the autograd thread's cuBLAS workspace
//                                            is made once and kept, and can be a weight's size)
//   made in the optimizer step, kept past it optimizer state (exp_avg, momentum_buffer, step)
//   made in forward, freed after it, before  activation (saved for backward, or the output and loss)
//   the next step's forward has begun
//   made and freed in one forward, backward
//   or optimizer step                        temporary
//   made building or moving the model        parameter (parameters and buffers, and the copies a
//                                            .cuda() then .to(dtype) makes on the way)
//   made by the data loader, or by the
//   program's code outside a forward and
//   freed after the next forward began       input
//   anything else                            other (a library's workspace made in the first forward or
//                                            backward and kept, a tensor kept across steps)
import { RequestKind, type RequestStream } from '../stream/request-stream';
import type { TraceDetails } from '../snapshot/trace-columns';
import { BlockState, type MemoryLayout } from '../measures/memory-layout';
import { Phase } from './frame-phase';
import { requestPhases, type RequestPhases } from './request-phases';

export const enum Category {
  parameter = 0,
  gradient = 1,
  optimizerState = 2,
  activation = 3,
  temporary = 4,
  input = 5,
  other = 6,
}

/** The JSON names (replay --json's "categories"), by Category. */
export const CATEGORY_KEYS = ['parameter', 'gradient', 'optimizer_state', 'activation', 'temporary', 'input', 'other'] as const;
export type CategoryKey = (typeof CATEGORY_KEYS)[number];
/** In words, by Category. */
export const CATEGORY_NAMES = ['parameters', 'gradients', 'optimizer state', 'activations', 'temporaries', 'input data', 'other'] as const;
export const CATEGORY_COUNT = CATEGORY_KEYS.length;

/** A category named in user_metadata (torch.cuda.memory._set_memory_metadata) by one of these words
 * (a phase named there, "step 3 optimizer", is request-phases.ts's). */
const NAMED: [RegExp, Category][] = [
  [/optimi[sz]er[ _-]?state|\bexp_avg/i, Category.optimizerState],
  [/\bgrad(ient)?s?\b/i, Category.gradient],
  [/\bparam(eter)?s?\b|\bweights?\b/i, Category.parameter],
  [/\bactivations?\b/i, Category.activation],
  [/\btemp(orar(y|ies))?\b|\bscratch\b|\bworkspace\b/i, Category.temporary],
  [/\binputs?\b|\bdata\b/i, Category.input],
];

export interface Categories {
  /** Per logical id: its Category. */
  of: Uint8Array;
  phases: RequestPhases;
}

export function categorize(stream: RequestStream, details: TraceDetails | undefined): Categories {
  const phases = requestPhases(stream, details);
  const { phase, instance, kinds } = phases;
  const of = new Uint8Array(stream.idCount).fill(Category.other);
  const madeAt = new Int32Array(stream.idCount).fill(-1);
  const freedAt = new Int32Array(stream.idCount).fill(-1);
  for (let i = 0; i < stream.length; i++) {
    if (stream.kind[i] === RequestKind.alloc) madeAt[stream.id[i]!] = i;
    else freedAt[stream.id[i]!] = i;
  }
  // The first request of the next step's forward after each instance: a forward that follows a
  // backward or an optimizer step (Infinity: none; the trace ends in this step).
  const nextStep = new Float64Array(kinds.length).fill(Infinity);
  for (let k = kinds.length - 1, next = Infinity; k >= 0; k--) {
    nextStep[k] = next;
    if (kinds[k] === Phase.forward && k > 0 && kinds[k - 1] !== Phase.forward) next = phases.first[k]!;
  }
  // The first request of the next forward instance after each instance (Infinity: none).
  const nextForward = new Float64Array(kinds.length).fill(Infinity);
  for (let k = kinds.length - 1, next = Infinity; k >= 0; k--) {
    nextForward[k] = next;
    if (kinds[k] === Phase.forward) next = phases.first[k]!;
  }
  // Parameters' sizes, which their gradients share, and how many there are of each.
  const parameterSizes = new Map<number, number>();
  for (let i = 0; i < stream.length; i++) {
    if (stream.kind[i] === RequestKind.alloc && phase[i] === Phase.init) parameterSizes.set(stream.size[i]!, (parameterSizes.get(stream.size[i]!) ?? 0) + 1);
  }
  for (let id = 0; id < stream.idCount; id++) {
    const a = madeAt[id]!;
    if (a < 0) continue; // made before the trace began: unknown
    const f = freedAt[id]!;
    const named = details ? nameOf(details, stream.source[a]!) : null;
    if (named !== null) {
      of[id] = named;
      continue;
    }
    const inst = instance[a]!;
    // Freed in the phase that made it (a zero_grad after an optimizer step that allocated nothing
    // shares the backward's instance, not its phase).
    const sameInstance = f >= 0 && instance[f] === inst && phase[f] === phase[a];
    switch (phase[a]) {
      case Phase.backward:
        of[id] = sameInstance ? Category.temporary : parameterSizes.has(stream.size[a]!) ? Category.gradient : Category.other;
        break;
      case Phase.optimizer:
        of[id] = sameInstance ? Category.temporary : Category.optimizerState;
        break;
      case Phase.forward:
        if (sameInstance) of[id] = Category.temporary;
        else of[id] = (f >= 0 ? f <= nextStep[inst]! : nextStep[inst] === Infinity) ? Category.activation : Category.other;
        break;
      case Phase.init:
        of[id] = Category.parameter;
        break;
      case Phase.data:
        of[id] = Category.input;
        break;
      case Phase.user: {
        // Made outside a forward (between steps) and freed once the next forward has begun: that step's input.
        const next = inst < 0 ? 0 : nextForward[inst]!;
        if ((inst < 0 || kinds[inst] !== Phase.forward) && f >= 0 && f >= next) of[id] = Category.input;
        break;
      }
    }
  }
  keepGradientsPerParameter(stream, of, madeAt, freedAt, instance, parameterSizes);
  return { of, phases };
}

/** In each backward, no more gradients of a size than parameters of it: the excess (never freed first,
 * the latest made first among those) is other. */
function keepGradientsPerParameter(
  stream: RequestStream,
  of: Uint8Array,
  madeAt: Int32Array,
  freedAt: Int32Array,
  instance: Int32Array,
  parameterSizes: ReadonlyMap<number, number>,
): void {
  const groups = new Map<string, number[]>();
  for (let id = 0; id < of.length; id++) {
    if (of[id] !== Category.gradient) continue;
    const a = madeAt[id]!;
    const key = `${instance[a]} ${stream.size[a]}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(id);
  }
  for (const ids of groups.values()) {
    const allowed = parameterSizes.get(stream.size[madeAt[ids[0]!]!]!) ?? 0;
    if (ids.length <= allowed) continue;
    // Kept first: those freed soonest (by zero_grad; a workspace lives on, or until the program clears
    // it at its end), then the earliest made.
    const until = (id: number): number => (freedAt[id]! < 0 ? Infinity : freedAt[id]!);
    ids.sort((x, y) => until(x) - until(y) || madeAt[x]! - madeAt[y]!);
    for (const id of ids.slice(allowed)) of[id] = Category.other;
  }
}

function nameOf(details: TraceDetails, entry: number): Category | null {
  const meta = entry >= 0 ? details.context.get(entry)?.user_metadata : undefined;
  if (!meta) return null;
  for (const [word, category] of NAMED) if (word.test(meta)) return category;
  return null;
}

/** Requested bytes by category, live after each moment asked for (request indices, ascending; -1: before the first). */
export function bytesByCategoryAt(stream: RequestStream, categories: Categories, at: readonly number[], initial = true): Float64Array[] {
  const live = new Float64Array(CATEGORY_COUNT);
  if (initial) for (const b of stream.initialBlocks) if (!b.pending) live[Category.other]! += b.requested;
  const out: Float64Array[] = [];
  let k = 0;
  while (k < at.length && at[k]! < 0) (out.push(live.slice()), k++);
  for (let i = 0; i < stream.length && k < at.length; i++) {
    const id = stream.id[i]!;
    const c = categories.of[id]!;
    if (stream.kind[i] === RequestKind.alloc) {
      if (!stream.failedInRecording.has(id)) live[c]! += stream.size[i]!;
    } else if (!stream.failedInRecording.has(id)) live[c]! -= stream.size[i]!;
    while (k < at.length && at[k] === i) (out.push(live.slice()), k++);
  }
  while (k < at.length) (out.push(live.slice()), k++);
  return out;
}

/** Requested bytes by category of the blocks allocated in `layout` (`of`: each allocation's category by
 * logical id; an id it lacks is "other"): what the stats panel and the timeline's legend show at the cursor. */
export function bytesByCategoryIn(layout: MemoryLayout, of: Uint8Array): Float64Array {
  const bytes = new Float64Array(CATEGORY_COUNT);
  for (let b = 0; b < layout.blockAddr.length; b++) {
    if (layout.blockState[b] === BlockState.allocated) bytes[of[layout.blockId[b]!] ?? Category.other]! += layout.blockRequested[b]!;
  }
  return bytes;
}

export interface CategoryTotals {
  /** The request after which the live requested bytes peaked (-1: before the first). */
  peakRequest: number;
  atPeak: Float64Array;
  atEnd: Float64Array;
  /** Each category's largest total over the run. */
  max: Float64Array;
}

/** Requested bytes by category: at the run's peak of live requested bytes, at its end (after request
 * `until`, default the last; an OOM's request: the state it failed in), and each one's largest total. */
export function categoryTotals(stream: RequestStream, categories: Categories, until = stream.length - 1): CategoryTotals {
  const live = new Float64Array(CATEGORY_COUNT);
  for (const b of stream.initialBlocks) if (!b.pending) live[Category.other]! += b.requested;
  let total = live.reduce((a, b) => a + b, 0);
  let best = total;
  let peakRequest = -1;
  let atPeak = live.slice();
  const max = live.slice();
  const end = Math.min(until, stream.length - 1);
  for (let i = 0; i <= end; i++) {
    const id = stream.id[i]!;
    if (stream.failedInRecording.has(id)) continue;
    const c = categories.of[id]!;
    const bytes = stream.kind[i] === RequestKind.alloc ? stream.size[i]! : -stream.size[i]!;
    live[c]! += bytes;
    total += bytes;
    if (live[c]! > max[c]!) max[c] = live[c]!;
    if (total > best) {
      best = total;
      peakRequest = i;
      atPeak = live.slice();
    }
  }
  return { peakRequest, atPeak, atEnd: live, max };
}

/** A category table as JSON: { parameter: bytes, gradient: bytes, ... }. */
export function categoryRecord(bytes: Float64Array): Record<CategoryKey, number> {
  return Object.fromEntries(CATEGORY_KEYS.map((k, c) => [k, bytes[c]!])) as Record<CategoryKey, number>;
}

/** "41% activations, 25% optimizer state, ...": the categories of `bytes`, largest first, those of 1% or more. */
export function categorySentence(bytes: Float64Array): string {
  const total = bytes.reduce((a, b) => a + b, 0);
  if (total <= 0) return 'nothing allocated';
  return [...bytes.keys()]
    .filter((c) => bytes[c]! / total >= 0.01)
    .sort((a, b) => bytes[b]! - bytes[a]!)
    .map((c) => `${Math.round((bytes[c]! / total) * 100)}% ${CATEGORY_NAMES[c]}`)
    .join(', ');
}

/** At most this many points a stacked row: many times a timeline's width in pixels, and a 10M-request
 * trace's rows stay under 1 MB (one point a request would be 280 MB, kept by the page). */
export const STACKED_POINTS = 1 << 15;

/** Requested bytes over the requests, stacked by category, at most STACKED_POINTS points a row. */
export interface StackedCategories {
  /** Row c (of CATEGORY_COUNT, each `points` long) holds categories 0..c together: the tops of the
   * timeline's stacked areas. Point k covers requests floor(k·requests/points) up to the next point's
   * first, and holds each row's largest value over them (as the timeline's columns do, so the rows nest). */
  stacked: Float32Array;
  points: number;
  /** The requests the points cover: the stream's length. */
  requests: number;
}

/**
 * Requested bytes after each request, stacked by category. `failed`: requests whose alloc failed in the
 * replay (they never existed). Float32: the timeline draws to a pixel.
 */
export function stackedCategorySeries(stream: RequestStream, categories: Categories, failed: ReadonlySet<number> = new Set(), maxPoints = STACKED_POINTS): StackedCategories {
  const n = stream.length;
  const points = Math.min(n, maxPoints);
  const out = new Float32Array(CATEGORY_COUNT * points);
  const live = new Float64Array(CATEGORY_COUNT);
  const alive = new Uint8Array(stream.idCount);
  for (const b of stream.initialBlocks) {
    if (b.pending) continue;
    alive[b.id] = 1;
    live[categories.of[b.id]!]! += b.requested;
  }
  let k = -1;
  let next = 0;
  for (let i = 0; i < n; i++) {
    const id = stream.id[i]!;
    const c = categories.of[id]!;
    if (stream.kind[i] === RequestKind.alloc) {
      if (!failed.has(i) && !stream.failedInRecording.has(id)) {
        alive[id] = 1;
        live[c]! += stream.size[i]!;
      }
    } else if (alive[id]) {
      alive[id] = 0;
      live[c]! -= stream.size[i]!;
    }
    // The point's first request sets it; the others raise it.
    const first = i === next;
    if (first) next = Math.floor(((++k + 1) * n) / points);
    let top = 0;
    for (let r = 0; r < CATEGORY_COUNT; r++) {
      top += live[r]!;
      const at = r * points + k;
      if (first || top > out[at]!) out[at] = top;
    }
  }
  return { stacked: out, points, requests: n };
}
