// Bytes that some of the program's allocations hold after each request (those a stack view selects):
// the timeline's overlay for one frame. Requested bytes, as memory_viz's timelines draw them, from the
// request stream alone, so the same for every config, less the allocs a replay's OOMs refused.
import { RequestKind, type RequestStream } from '../stream/request-stream';

/** `include(id)`: whether an allocation counts; `failed`: request indices whose alloc failed (OOM). */
export function bytesOverTime(stream: RequestStream, include: (id: number) => boolean, failed: ReadonlySet<number> = new Set()): Float64Array {
  const out = new Float64Array(stream.length);
  const live = new Uint8Array(stream.idCount);
  let bytes = 0;
  for (const b of stream.initialBlocks) {
    if (!b.pending && include(b.id)) {
      live[b.id] = 1;
      bytes += b.requested;
    }
  }
  const { kind, id, size } = stream;
  for (let i = 0; i < stream.length; i++) {
    const k = id[i]!;
    if (kind[i] === RequestKind.alloc) {
      if (!failed.has(i) && include(k)) {
        live[k] = 1;
        bytes += size[i]!;
      }
    } else if (live[k]) {
      // A deferred free stops the program's use at once: the bytes leave the overlay here too.
      live[k] = 0;
      bytes -= size[i]!;
    }
    out[i] = bytes;
  }
  return out;
}
