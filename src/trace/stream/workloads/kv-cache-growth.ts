// LLM inference with a KV cache that grows by reallocation: when a sequence outgrows its buffers,
// each layer's cache is copied into a buffer one growth chunk larger and the old one is freed
// (what torch.cat-style caches do). Sequences finish at random lengths and new ones take their
// place, so buffers of many sizes come and go while others stay live between them.

import { Prng } from './prng';
import { TensorTracker } from './tensor-tracker';
import { resolveParams, SEED_PARAM, type Workload } from './workload';

const BF16 = 2;
const FP32 = 4;
/** Query heads per KV head (grouped-query attention), for the size of the per-step activations. */
const QUERY_GROUP = 4;
const VOCAB = 32000;

interface Sequence {
  /** One K+V buffer per layer. */
  buffers: number[];
  /** Tokens the buffers hold room for. */
  capacity: number;
  length: number;
  /** The length at which the sequence finishes. */
  target: number;
}

export const kvCacheGrowth: Workload = {
  id: 'kv-cache',
  name: 'KV-cache growth (inference)',
  description:
    'Batched decoding: each sequence keeps one K+V buffer per layer and, when full, reallocates it ' +
    'one growth chunk larger (the new buffer reads the old, then the old is freed); finished ' +
    'sequences are replaced by new prompts.',
  params: [
    { key: 'layers', label: 'Layers', default: 32, min: 1, max: 128, integer: true, unit: 'count', help: 'decoder layers; each has its own K+V buffer per sequence' },
    { key: 'kvHeads', label: 'KV heads', default: 8, min: 1, max: 128, integer: true, unit: 'count', help: 'key/value heads per layer (grouped-query attention)' },
    { key: 'headDim', label: 'Head dimension', default: 128, min: 16, max: 512, integer: true, unit: 'features', help: 'features per head; K and V take 2 x kvHeads x headDim bf16 values per token' },
    { key: 'maxTokens', label: 'Max tokens per sequence', default: 4096, min: 16, max: 131072, integer: true, unit: 'tokens', help: 'longest a sequence grows (prompt + generated) before it finishes' },
    { key: 'sequences', label: 'Concurrent sequences', default: 16, min: 1, max: 256, integer: true, unit: 'count', help: 'sequences decoded together; a finished one is replaced at once' },
    { key: 'chunk', label: 'Growth chunk', default: 128, min: 1, max: 8192, integer: true, unit: 'tokens', help: 'tokens added to a cache each time it is reallocated' },
    { key: 'steps', label: 'Decode steps', default: 1500, min: 1, max: 20000, integer: true, unit: 'steps', help: 'decode iterations; each adds one token to every sequence' },
    SEED_PARAM,
  ],
  generate(given) {
    const p = resolveParams(kvCacheGrowth, given);
    const layers = p.layers!;
    const chunk = p.chunk!;
    const maxTokens = p.maxTokens!;
    const n = p.sequences!;
    const perTokenLayer = 2 * p.kvHeads! * p.headDim! * BF16;
    const dModel = QUERY_GROUP * p.kvHeads! * p.headDim!;
    const rng = new Prng(p.seed!);
    const t = new TensorTracker();
    const roundUp = (tokens: number): number => Math.ceil(tokens / chunk) * chunk;

    let started = 0;
    let growths = 0;
    const start = (): Sequence => {
      started++;
      // Prompts up to a quarter of the maximum; the rest of the length is generated.
      const prompt = rng.int(1, Math.max(1, Math.floor(maxTokens / 4)));
      const target = rng.int(Math.min(prompt + 1, maxTokens), maxTokens);
      const capacity = roundUp(prompt);
      // Prefill: the prompt's hidden states are written, each layer's cache reads them, and the
      // last position's logits pick the first generated token.
      const hidden = t.alloc(prompt * dModel * BF16);
      const buffers = Array.from({ length: layers }, () => t.alloc(capacity * perTokenLayer, hidden));
      const logits = t.alloc(VOCAB * FP32, hidden);
      t.free(hidden);
      t.free(logits);
      return { buffers, capacity, length: prompt, target };
    };

    const seqs = Array.from({ length: n }, start);
    for (let step = 0; step < p.steps!; step++) {
      t.markStep();
      // One token for each sequence: hidden states in, logits out.
      const hidden = t.alloc(n * dModel * BF16);
      const logits = t.alloc(n * VOCAB * FP32, hidden);
      t.free(hidden);
      for (let s = 0; s < n; s++) {
        const q = seqs[s]!;
        if (q.length === q.capacity) {
          // Full: copy each layer's cache into one a chunk larger, then drop the old one.
          q.capacity += chunk;
          growths++;
          for (let l = 0; l < layers; l++) {
            const old = q.buffers[l]!;
            q.buffers[l] = t.alloc(q.capacity * perTokenLayer, old);
            t.free(old);
          }
        }
        q.length++;
      }
      t.free(logits);
      for (let s = 0; s < n; s++) {
        const q = seqs[s]!;
        if (q.length < q.target) continue;
        for (const b of q.buffers) t.free(b);
        seqs[s] = start();
      }
    }
    return t.finish(
      `KV-cache decoding: ${n} concurrent sequences (${started} started), ${layers} layers at ` +
        `${perTokenLayer} bytes per token per layer, up to ${maxTokens} tokens, ${growths} reallocations ` +
        `in ${chunk}-token chunks over ${p.steps} steps, seed ${p.seed}`,
    );
  },
};
