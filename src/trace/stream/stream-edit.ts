// A request stream changed as a changed program would make it: some requests dropped (a free moved
// elsewhere), frees inserted before a request (made earlier, as `del` would), sizes changed.
// The indices that point into the stream (deferred frees' completions, the recording's empty_cache
// calls, released pools, recorded OOMs) follow their requests; `origin` maps each new request back to
// the old one it is, or the old one it was inserted before, so that figures can be said in the
// recording's own request numbers.
import { RequestKind, RequestStreamBuilder, type RequestStream } from './request-stream';

export interface InsertedFree {
  id: number;
  size: number;
  stream: number;
}

export interface StreamEdit {
  /** Old requests left out. */
  drop?: ReadonlySet<number>;
  /** Frees made just before old request i (i === length: after the last). */
  freesBefore?: ReadonlyMap<number, readonly InsertedFree[]>;
  /** Old request i's new size (a free's must be its alloc's). */
  resize?: (i: number, size: number) => number;
}

export interface EditedStream {
  stream: RequestStream;
  /** For each new request, the old request it is or was inserted before. */
  origin: Int32Array;
}

export function editStream(s: RequestStream, edit: StreamEdit): EditedStream {
  const drop = edit.drop ?? new Set<number>();
  const inserted = edit.freesBefore ?? new Map<number, readonly InsertedFree[]>();
  const out = new RequestStreamBuilder(s.length + inserted.size);
  out.idCount = s.idCount;
  const origin: number[] = [];
  // newAt[i]: the new index of old request i's place (where it is, or would be); doneAt[i]: the new
  // length once old request i is through (before what is inserted before i + 1).
  const newAt = new Int32Array(s.length + 1);
  const doneAt = new Int32Array(s.length);
  const insert = (i: number): void => {
    for (const f of inserted.get(i) ?? []) {
      out.free(f.id, f.size, f.stream);
      origin.push(i);
    }
  };
  for (let i = 0; i < s.length; i++) {
    insert(i);
    newAt[i] = out.length;
    if (drop.has(i)) {
      doneAt[i] = out.length;
      continue;
    }
    const size = edit.resize ? edit.resize(i, s.size[i]!) : s.size[i]!;
    if (s.kind[i] === RequestKind.alloc) out.alloc(s.id[i]!, size, s.stream[i]!, s.source[i]!, s.input[i]!, s.pool[i]!);
    else out.free(s.id[i]!, size, s.stream[i]!, s.source[i]!, s.kind[i] === RequestKind.freeDeferred);
    origin.push(i);
    doneAt[i] = out.length;
  }
  insert(s.length);
  newAt[s.length] = out.length;
  // "After request i": after it (or, dropped, after what came before it), before anything inserted next.
  const after = (xs: Int32Array): Int32Array => xs.map((i) => (i < 0 ? i : doneAt[i]! - 1));
  const built = out.finish({
    ...s,
    recordedEmptyCache: after(s.recordedEmptyCache),
    recordedOoms: s.recordedOoms.map((i) => newAt[i]!),
    releasedPools: { after: after(s.releasedPools.after), pool: s.releasedPools.pool },
    stepStarts: s.stepStarts.map((i) => newAt[i]!),
  });
  return {
    stream: { ...built, completions: { before: s.completions.before.map((i) => newAt[i]!), id: s.completions.id } },
    origin: Int32Array.from(origin),
  };
}
