// A recording's requests as tokens that recordings of the same program at other sizes share: an alloc
// by its pool, whether it is on a side stream, and its whole stack (a compiled graph's frames by their
// function alone); a free by the stack of the block it
// frees. Two runs of one program issue the same sequence of tokens, less the few a library's choice
// (a cuBLAS workspace, a cuDNN algorithm) inserts or drops, so aligning them is a diff; taking the frees
// in, not the allocs alone, pairs the right members of runs of identical stacks (one per layer).
import type { Frame } from '../snapshot/snapshot';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import type { AllocationStacks } from '../measures/allocation-stacks';

/** Token ids shared by the recordings tokenized with one dictionary. */
export class TokenDictionary {
  private readonly ids = new Map<string, number>();

  id(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) this.ids.set(text, (id = this.ids.size));
    return id;
  }
}

/** torch.compile's generated code: a file named by a hash of the graph, which bakes in the shapes, so the
 * same program at another size runs the same code from another file (and its lines may move). Such a
 * frame is known by its function alone; allocations there align by their order. */
const GENERATED = /(^|\/)torchinductor_[^/]*\/|\/(fx_graph|aotautograd|inductor)_cache\/|<eval_with_key>|^<string>$/;

const frameText = (frames: readonly Frame[]): string =>
  frames.map((f) => (GENERATED.test(f.filename.replace(/\\/g, '/')) ? `<compiled>:${f.name}` : `${f.filename}:${f.line}:${f.name}`)).join('|');

/** One token per request of `stream`; `stacks` gives each allocation's stack. */
export function requestTokens(stream: RequestStream, stacks: AllocationStacks, dictionary: TokenDictionary): Int32Array {
  const byKey = new Map<number, number>();
  const stackToken = (key: number): number => {
    let t = byKey.get(key);
    if (t === undefined) {
      const stack = stacks.stackOfKey(key);
      byKey.set(key, (t = dictionary.id(typeof stack === 'string' ? stack : frameText(stack))));
    }
    return t;
  };
  // By number, not text: a stream has a few hundred thousand requests and a few thousand stacks.
  const allocToken = new Map<number, number>();
  const freeToken = new Map<number, number>();
  const tokens = new Int32Array(stream.length);
  for (let i = 0; i < stream.length; i++) {
    const id = stream.id[i]!;
    const stack = stackToken(stacks.keyOf[id] ?? -1);
    if (stream.kind[i] === RequestKind.alloc) {
      const pool = stream.pool[i]!;
      const side = stream.stream[i] === 0 ? 0 : 1;
      const key = (stack * 4096 + pool) * 2 + side;
      let t = allocToken.get(key);
      if (t === undefined) allocToken.set(key, (t = dictionary.id(`a ${pool} ${side} ${stack}`)));
      tokens[i] = t;
    } else {
      let t = freeToken.get(stack);
      if (t === undefined) freeToken.set(stack, (t = dictionary.id(`f ${stack}`)));
      tokens[i] = t;
    }
  }
  return tokens;
}

/** Per request of `stream`, 1 where its stack names nothing (no stack recorded, as a stacks='python'
 * recording's backward pass has, or no frames): such requests share one token and align by order alone. */
export function alignedByOrder(stream: RequestStream, stacks: AllocationStacks): Uint8Array {
  const byKey = new Map<number, number>();
  const out = new Uint8Array(stream.length);
  for (let i = 0; i < stream.length; i++) {
    const key = stacks.keyOf[stream.id[i]!] ?? -1;
    let v = byKey.get(key);
    if (v === undefined) {
      const stack = stacks.stackOfKey(key);
      byKey.set(key, (v = typeof stack === 'string' || stack.length === 0 ? 1 : 0));
    }
    out[i] = v;
  }
  return out;
}
