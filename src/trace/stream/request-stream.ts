// The program's side of a run: alloc(id, size, stream) and free(id), with nothing the allocator decided.
// Replaying it under another config asks "what would the allocator have done with these requests?".

import { growTyped } from '../../lib/grow-typed';

export const enum RequestKind {
  alloc = 0,
  free = 1,
}

/** A segment (and its live blocks) that existed before the first request: a trace that begins mid-run. */
export interface InitialSegment {
  addr: number;
  size: number;
  stream: number;
  small: boolean;
  /** A mapped range of an expandable segment rather than a cudaMalloc'd segment. */
  expandable?: boolean;
}

export interface InitialBlock {
  id: number;
  addr: number;
  /** Block size; exact when the final snapshot shows it, else inferred (see request-stream-from-trace.ts). */
  size: number;
  requested: number;
  stream: number;
}

export interface RequestStream {
  length: number;
  kind: Uint8Array;
  /** The logical block id each request concerns. */
  id: Int32Array;
  /** Bytes requested (for a free: the bytes its alloc requested). */
  size: Float64Array;
  stream: Float64Array;
  /** For each request, the index of the source event it came from (-1 if synthetic), e.g. for stack frames. */
  source: Int32Array;
  /** For an alloc, the logical id of a block the op that produces it reads (-1: unknown, as in a
   * recorded trace). The GPU arena's op kernel reads that block while it writes the new one. */
  input: Int32Array;
  /** Number of logical ids; ids are 0..idCount-1. */
  idCount: number;
  /** Ids whose alloc failed with OOM in the recording (they never existed there). */
  failedInRecording: Set<number>;
  initialSegments: InitialSegment[];
  initialBlocks: InitialBlock[];
  /** The recording's cudaMalloc calls in order (empty for generated workloads). */
  recordedSegments: { addr: number; size: number }[];
  /** The recording's segment_map events in order (expandable_segments; empty otherwise). */
  recordedMappings: { addr: number; size: number }[];
  /** What building the stream had to assume, in words for the user. */
  notes: string[];
  /** Generated workloads: the request index at which each step (iteration) begins; empty for traces. */
  stepStarts: Int32Array;
}

/** Appends requests to growable columns; `finish()` trims them into a RequestStream. */
export class RequestStreamBuilder {
  private n = 0;
  private kind: Uint8Array;
  private id: Int32Array;
  private size: Float64Array;
  private stream: Float64Array;
  private source: Int32Array;
  private input: Int32Array;
  idCount = 0;

  /** `capacity`: the expected number of requests (the columns grow past it). */
  constructor(capacity = 1024) {
    const n = Math.max(16, capacity);
    this.kind = new Uint8Array(n);
    this.id = new Int32Array(n);
    this.size = new Float64Array(n);
    this.stream = new Float64Array(n);
    this.source = new Int32Array(n);
    this.input = new Int32Array(n);
  }

  get length(): number {
    return this.n;
  }

  newId(): number {
    return this.idCount++;
  }

  alloc(id: number, size: number, stream: number, source = -1, input = -1): void {
    this.push(RequestKind.alloc, id, size, stream, source, input);
  }

  free(id: number, size: number, stream: number, source = -1): void {
    this.push(RequestKind.free, id, size, stream, source, -1);
  }

  finish(extra: Partial<Omit<RequestStream, 'length' | 'kind' | 'id' | 'size' | 'stream' | 'source' | 'input' | 'idCount'>> = {}): RequestStream {
    const n = this.n;
    // Views when little would be trimmed: a copy of a million requests costs more than the slack.
    const trim = <T extends Uint8Array | Int32Array | Float64Array>(a: T): T =>
      (n * 4 >= a.length * 3 ? a.subarray(0, n) : a.slice(0, n)) as T;
    return {
      length: n,
      kind: trim(this.kind),
      id: trim(this.id),
      size: trim(this.size),
      stream: trim(this.stream),
      source: trim(this.source),
      input: trim(this.input),
      idCount: this.idCount,
      failedInRecording: extra.failedInRecording ?? new Set(),
      initialSegments: extra.initialSegments ?? [],
      initialBlocks: extra.initialBlocks ?? [],
      recordedSegments: extra.recordedSegments ?? [],
      recordedMappings: extra.recordedMappings ?? [],
      notes: extra.notes ?? [],
      stepStarts: extra.stepStarts ?? new Int32Array(0),
    };
  }

  private push(kind: RequestKind, id: number, size: number, stream: number, source: number, input: number): void {
    if (this.n === this.kind.length) this.grow();
    const i = this.n++;
    this.kind[i] = kind;
    this.id[i] = id;
    this.size[i] = size;
    this.stream[i] = stream;
    this.source[i] = source;
    this.input[i] = input;
  }

  private grow(): void {
    const n = this.kind.length * 2;
    this.kind = growTyped(this.kind, n);
    this.id = growTyped(this.id, n);
    this.size = growTyped(this.size, n);
    this.stream = growTyped(this.stream, n);
    this.source = growTyped(this.source, n);
    this.input = growTyped(this.input, n);
  }

}
