// Mixture-of-experts layers: the router sends each token to top-k experts, and how many tokens
// each expert gets changes every layer and step, so the per-expert buffers have sizes that never
// repeat. The split is drawn from a Dirichlet (its concentration sets how uneven the router is)
// and rounded to whole tokens, with no expert taking more than every token once.

import { Prng } from './prng';
import { TensorTracker } from './tensor-tracker';
import { resolveParams, SEED_PARAM, type Workload } from './workload';
import { WorkloadParamError } from './workload-param-error';

const BF16 = 2;
const FP32 = 4;
const INT64 = 8;

/** Splits `total` assignments among `proportions.length` experts: largest remainder, each count <= cap. */
export function splitTokens(total: number, proportions: readonly number[], cap: number): number[] {
  const exact = proportions.map((q) => q * total);
  const counts = exact.map((x) => Math.min(cap, Math.floor(x)));
  let left = total - counts.reduce((s, c) => s + c, 0);
  // Hand out what rounding and the cap left over, largest remainder first, then to any expert with room.
  const frac = exact.map((x) => x - Math.floor(x));
  const order = frac.map((_, i) => i).sort((a, b) => frac[b]! - frac[a]! || a - b);
  for (const i of order) {
    if (left === 0) break;
    if (counts[i]! < cap) {
      counts[i]!++;
      left--;
    }
  }
  for (let i = 0; left > 0; i = (i + 1) % counts.length) {
    const room = Math.min(left, cap - counts[i]!);
    counts[i]! += room;
    left -= room;
  }
  return counts;
}

export const mixtureOfExperts: Workload = {
  id: 'moe',
  name: 'Mixture of experts',
  description:
    'Forward passes through MoE layers: per layer and step the router splits tokens x top-k among ' +
    'the experts at random, and each expert gets gathered-input, hidden and output buffers sized by ' +
    'its share, all freed once the outputs are combined.',
  params: [
    { key: 'tokens', label: 'Tokens per step', default: 8192, min: 1, max: 262144, integer: true, unit: 'tokens', help: 'tokens in one forward pass (batch x sequence length)' },
    { key: 'experts', label: 'Experts', default: 8, min: 1, max: 256, integer: true, unit: 'count', help: 'experts per MoE layer' },
    { key: 'topK', label: 'Top-k', default: 2, min: 1, max: 16, integer: true, unit: 'count', help: 'experts each token is routed to; must not exceed the number of experts' },
    { key: 'hidden', label: 'Hidden size', default: 2048, min: 16, max: 16384, integer: true, unit: 'features', help: 'model width: tokens enter and leave each expert at this width' },
    { key: 'expertHidden', label: 'Expert hidden size', default: 5632, min: 16, max: 65536, integer: true, unit: 'features', help: "each expert's inner (feed-forward) width" },
    { key: 'layers', label: 'Layers', default: 8, min: 1, max: 128, integer: true, unit: 'count', help: 'MoE layers per forward pass' },
    { key: 'steps', label: 'Steps', default: 20, min: 1, max: 1000, integer: true, unit: 'steps', help: 'forward passes, each with fresh router splits' },
    { key: 'balance', label: 'Router balance', default: 1, min: 0.05, max: 100, integer: false, log: true, help: 'Dirichlet concentration of the split: small values send most tokens to few experts, large ones split evenly' },
    SEED_PARAM,
  ],
  check(v) {
    if (v.topK! > v.experts!) {
      throw new WorkloadParamError(`Parameter "topK" (${v.topK}) must not exceed "experts" (${v.experts}): a token goes to k different experts.`, 'topK');
    }
  },
  generate(given) {
    const p = resolveParams(mixtureOfExperts, given);
    const T = p.tokens!;
    const E = p.experts!;
    const k = p.topK!;
    const h = p.hidden!;
    const f = p.expertHidden!;
    const rng = new Prng(p.seed!);
    const t = new TensorTracker();

    // Persistent bf16 weights: a router and an up and a down projection per expert, per layer.
    for (let layer = 0; layer < p.layers!; layer++) {
      t.alloc(E * h * BF16);
      for (let e = 0; e < E; e++) {
        t.alloc(h * f * BF16);
        t.alloc(f * h * BF16);
      }
    }

    let busiest = 0;
    for (let step = 0; step < p.steps!; step++) {
      t.markStep();
      let x = t.alloc(T * h * BF16); // embeddings
      for (let layer = 0; layer < p.layers!; layer++) {
        const logits = t.alloc(T * E * FP32, x);
        const topWeights = t.alloc(T * k * FP32, logits);
        const topIndices = t.alloc(T * k * INT64, logits);
        t.free(logits);
        const counts = splitTokens(T * k, rng.dirichlet(E, p.balance!), T);
        const live: number[] = [];
        for (let e = 0; e < E; e++) {
          const c = counts[e]!;
          if (c === 0) continue; // an idle expert gets no buffers
          busiest = Math.max(busiest, c);
          const gathered = t.alloc(c * h * BF16, x); // its tokens, permuted out of x
          const inner = t.alloc(c * f * BF16, gathered);
          const act = t.alloc(c * f * BF16, inner);
          t.free(inner);
          const out = t.alloc(c * h * BF16, act);
          t.free(act);
          live.push(gathered, out);
        }
        // Combine: scatter-add each expert's output, weighted, back into token order.
        const y = t.alloc(T * h * BF16, topWeights);
        for (const id of live) t.free(id);
        t.free(topWeights);
        t.free(topIndices);
        t.free(x);
        x = y;
      }
      t.free(x);
    }
    return t.finish(
      `Mixture of experts: ${p.layers} layers of ${E} experts (top-${k}), ${T} tokens per step, width ` +
        `${h}/${f}, router balance ${p.balance}, busiest expert ${busiest} tokens, ${p.steps} steps, seed ${p.seed}`,
    );
  },
};
