// Each request's phase (frame-phase.ts) and the phase instance it belongs to: one forward pass, one
// backward, one optimizer step. An instance runs from the first request of its kind to the first of
// another kind among forward, backward and optimizer; the requests between (the program's own code,
// zero_grad, the data loader) belong to the instance around them. A phase the program named in
// user_metadata wins over the frames. "Freed within the phase that made it"
// means: freed in the same instance.
import type { TraceDetails } from '../snapshot/trace-columns';
import type { RequestStream } from '../stream/request-stream';
import { Phase, phaseOfFrames, phaseOfMetadata } from './frame-phase';

export interface RequestPhases {
  /** Per request: its phase (a frameless entry after a forward: backward). */
  phase: Uint8Array;
  /** Per request: its instance (-1: before the first forward, backward or optimizer step). */
  instance: Int32Array;
  /** Per instance: its kind (forward, backward or optimizer), its first request, the last of its own
   * kind before any zero_grad (an optimizer step ends there, the gradients still alive), and its last. */
  kinds: Phase[];
  first: number[];
  lastOwn: number[];
  last: number[];
}

const driving = (p: Phase): boolean => p === Phase.forward || p === Phase.backward || p === Phase.optimizer;

/** `details`: the trace's frames (absent: every request is Phase.none, one instance-less run). */
export function requestPhases(stream: RequestStream, details: TraceDetails | undefined): RequestPhases {
  const n = stream.length;
  const phase = new Uint8Array(n);
  const instance = new Int32Array(n).fill(-1);
  const kinds: Phase[] = [];
  const first: number[] = [];
  const lastOwn: number[] = [];
  const last: number[] = [];
  // A frame list's phase once: a trace has a few thousand lists and up to millions of entries.
  const ofList = new Map<number, Phase>();
  let current = -1;
  /** The last instance a zero_grad ran in: its own part has ended there. */
  let zeroed = -1;
  for (let i = 0; i < n; i++) {
    const entry = stream.source[i]!;
    const list = details && entry >= 0 ? details.frames[entry]! : -1;
    let p: Phase = Phase.none;
    if (list >= 0) {
      p = ofList.get(list) ?? phaseOfFrames(details!.frameLists[list]!);
      ofList.set(list, p);
    }
    const meta = details && entry >= 0 ? details.context.get(entry)?.user_metadata : undefined;
    // (zero_grad, which the program's "optimizer" span may hold, stays itself: it frees the gradients.)
    if (meta && p !== Phase.zeroGrad) p = phaseOfMetadata(meta) ?? p;
    // No frames while a forward or backward runs: the autograd engine's thread.
    if (p === Phase.none && details && current >= 0 && (kinds[current] === Phase.forward || kinds[current] === Phase.backward)) p = Phase.backward;
    phase[i] = p;
    if (driving(p) && (current < 0 || kinds[current] !== p)) {
      current = kinds.length;
      kinds.push(p);
      first.push(i);
      lastOwn.push(i);
      last.push(i);
    }
    instance[i] = current;
    if (current >= 0) {
      last[current] = i;
      if (p === Phase.zeroGrad) zeroed = current;
      else if (p === kinds[current] && zeroed !== current) lastOwn[current] = i;
    }
  }
  return { phase, instance, kinds, first, lastOwn, last };
}
