// The program's steps (training iterations, or micro-batches under gradient accumulation): where the
// program marked them (the profiler's ProfilerStep#N ranges, user_metadata that counts steps: "step
// 3 ..."), else each forward pass of a trace that has a backward. A step ends where the next begins.
// Per step: its peak of live requested bytes, and what is alive at its start, by category ("what is
// alive between steps"). An inference trace the program did not mark has no steps.
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { Phase } from './frame-phase';
import { bytesByCategoryAt, type Categories } from './categories';
import type { TimelineAnnotation } from '../measures/timeline-annotations';

export interface Step {
  /** Its first request, and the first of the next step (or the trace's length). */
  start: number;
  end: number;
  /** Requested bytes live at its peak, and the request after which that was. */
  peak: number;
  peakRequest: number;
  /** Requested bytes by category live just before its first request. */
  atStart: Float64Array;
}

/** First requests of the steps, in order: the program's own marks (two or more), else every forward
 * pass's in a trace that has a backward. */
export function stepStarts(categories: Categories, annotations: readonly TimelineAnnotation[] = []): number[] {
  const profiler = annotations.filter((a) => a.kind === 'range' && /^ProfilerStep#\d+$/.test(a.label)).map((a) => a.start);
  if (profiler.length >= 2) return [...new Set(profiler)].sort((a, b) => a - b);
  const counted: number[] = [];
  let last: string | null = null;
  for (const a of annotations) {
    const n = a.kind === 'metadata' ? /\bstep\s*#?\s*(\d+)/i.exec(a.label)?.[1] : undefined;
    if (n !== undefined && n !== last) {
      counted.push(a.start);
      last = n;
    }
  }
  if (counted.length >= 2) return counted.sort((a, b) => a - b);
  const { kinds, first } = categories.phases;
  if (!kinds.includes(Phase.backward)) return [];
  return kinds.flatMap((kind, k) => (kind === Phase.forward ? [first[k]!] : []));
}

/** The steps beginning at `starts` (stepStarts'). */
export function steps(stream: RequestStream, categories: Categories, starts: readonly number[]): Step[] {
  if (starts.length === 0) return [];
  const atStart = bytesByCategoryAt(stream, categories, starts.map((s) => s - 1));
  const out: Step[] = starts.map((start, k) => ({ start, end: starts[k + 1] ?? stream.length, peak: 0, peakRequest: start - 1, atStart: atStart[k]! }));
  // Live requested bytes over the run, the peak of each step.
  let live = 0;
  for (const b of stream.initialBlocks) if (!b.pending) live += b.requested;
  let k = -1;
  for (let i = 0; i < stream.length; i++) {
    while (k + 1 < out.length && out[k + 1]!.start === i) {
      k++;
      out[k]!.peak = live;
    }
    const id = stream.id[i]!;
    if (!stream.failedInRecording.has(id)) live += stream.kind[i] === RequestKind.alloc ? stream.size[i]! : -stream.size[i]!;
    if (k >= 0 && live > out[k]!.peak) {
      out[k]!.peak = live;
      out[k]!.peakRequest = i;
    }
  }
  return out;
}
