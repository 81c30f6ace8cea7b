// What the program said about its own phases, placed on the requests: the profiler's record_function
// ranges that PyTorch keeps as external_annotations (START and END by name, with time_us), and the
// stretches under one user_metadata (torch.cuda.memory._set_memory_metadata). Also each request's
// time, for a timeline drawn over time_us rather than over requests.
import { upperBound } from '../../lib/binary-search';
import type { TraceDetails } from '../snapshot/trace-columns';
import type { RequestStream } from '../stream/request-stream';

export interface TimelineAnnotation {
  /** First and last request it covers (equal for a moment). */
  start: number;
  end: number;
  label: string;
  kind: 'range' | 'metadata';
}

/** Whether the trace has times at all (without building requestTimes' array: 8 bytes a request). */
export function hasTimes(stream: RequestStream, details: TraceDetails | undefined): boolean {
  return details !== undefined && stream.length > 0 && details.time.some((t) => !Number.isNaN(t));
}

/**
 * Each request's time_us, made non-decreasing (a request without a time takes the one before it's,
 * clocks that step back are held), or null when the trace has no times at all.
 */
export function requestTimes(stream: RequestStream, details: TraceDetails | undefined): Float64Array | null {
  if (!details || stream.length === 0) return null;
  const out = new Float64Array(stream.length);
  let last = NaN;
  for (let i = 0; i < stream.length; i++) {
    const e = stream.source[i]!;
    const t = e >= 0 ? details.time[e]! : NaN;
    if (!Number.isNaN(t) && !(t < last)) last = t;
    out[i] = last;
  }
  const first = out.findIndex((t) => !Number.isNaN(t));
  if (first < 0) return null;
  out.fill(out[first]!, 0, first);
  return out;
}

interface ExternalAnnotation {
  stage?: unknown;
  name?: unknown;
  device?: unknown;
  time_us?: unknown;
}

/** The request at time `t`: the last one made at or before it (0 before the first). */
const requestAt = (times: Float64Array, t: number): number => Math.max(0, upperBound(times, t) - 1);

export function timelineAnnotations(
  stream: RequestStream,
  details: TraceDetails | undefined,
  external: readonly unknown[] | undefined,
  device: number,
  times: Float64Array | null,
  /** For each entry, its request (made only when user_metadata needs it: 4 bytes an entry). */
  requestOfEntries: () => Int32Array,
): TimelineAnnotation[] {
  const out: TimelineAnnotation[] = [];
  if (times) {
    // START and END of one name pair up in order; a START never ended lasts to the last request.
    const open = new Map<string, number[]>();
    const sorted = (external ?? [])
      .filter((a): a is ExternalAnnotation => typeof a === 'object' && a !== null)
      .filter((a) => typeof a.name === 'string' && typeof a.time_us === 'number' && (a.device === undefined || a.device === device))
      .sort((a, b) => (a.time_us as number) - (b.time_us as number));
    for (const a of sorted) {
      const name = a.name as string;
      const at = requestAt(times, a.time_us as number);
      if (a.stage === 'END') {
        const start = open.get(name)?.shift();
        if (start !== undefined) out.push({ start, end: at, label: name, kind: 'range' });
      } else if (a.stage === 'START') {
        let starts = open.get(name);
        if (!starts) open.set(name, (starts = []));
        starts.push(at);
      } else {
        out.push({ start: at, end: at, label: name, kind: 'range' });
      }
    }
    for (const [name, starts] of open) for (const start of starts) out.push({ start, end: stream.length - 1, label: name, kind: 'range' });
  }
  // user_metadata: a stretch from each change of value to the next ('' : none set, or cleared).
  if (details && details.context.size > 0) {
    const requestOf = requestOfEntries();
    let value = '';
    let since = 0;
    const close = (end: number): void => {
      if (value !== '' && end >= since) out.push({ start: since, end, label: value, kind: 'metadata' });
    };
    for (let e = 0; e < requestOf.length; e++) {
      const v = details.context.get(e)?.user_metadata ?? '';
      if (v === value) continue;
      const r = Math.max(0, requestOf[e]!);
      close(r - 1);
      value = v;
      since = r;
    }
    close(stream.length - 1);
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}
