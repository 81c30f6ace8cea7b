// The program's side of a run: alloc(id, size, stream) and free(id), with nothing the allocator decided.
// Replaying it under another config asks "what would the allocator have done with these requests?".

import { growColumns, makeColumns, trimColumns, type ColumnsOf } from '../../lib/columns';

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

const REQUEST_COLUMNS = {
  kind: Uint8Array,
  id: Int32Array,
  size: Float64Array,
  stream: Float64Array,
  source: Int32Array,
  input: Int32Array,
} as const;

/** Appends requests to growable columns; `finish()` trims them into a RequestStream. */
export class RequestStreamBuilder {
  private n = 0;
  private c: ColumnsOf<typeof REQUEST_COLUMNS>;
  idCount = 0;

  /** `capacity`: the expected number of requests (the columns grow past it). */
  constructor(capacity = 1024) {
    this.c = makeColumns(REQUEST_COLUMNS, Math.max(16, capacity));
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

  finish(extra: Partial<Omit<RequestStream, keyof typeof REQUEST_COLUMNS | 'length' | 'idCount'>> = {}): RequestStream {
    return {
      length: this.n,
      ...trimColumns(this.c, REQUEST_COLUMNS, this.n),
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
    let c = this.c;
    if (this.n === c.kind.length) {
      growColumns(c, REQUEST_COLUMNS, c.kind.length * 2);
      c = this.c;
    }
    const i = this.n++;
    c.kind[i] = kind;
    c.id[i] = id;
    c.size[i] = size;
    c.stream[i] = stream;
    c.source[i] = source;
    c.input[i] = input;
  }
}
