// GPT-style decoder training under bf16 autocast with a sequence length that changes every step:
// the activation sizes (and the attention matrices, quadratic in the length) change with it, so
// cached blocks from one step rarely fit the next one exactly. This is the workload that makes
// max_split_size_mb matter in practice.

import { Prng } from './prng';
import { TensorTracker } from './tensor-tracker';
import { requireOrdered, resolveParams, SEED_PARAM, type Workload } from './workload';

/** GPT-2's vocabulary padded to a multiple of 64, tied between embedding and LM head. */
const VOCAB = 50304;
const BF16 = 2;
const FP32 = 4;
const INT64 = 8;

/** One forward op: what it wrote, what it read, and what backward needs of it. */
interface ForwardOp {
  out: number;
  /** Whether `out` stays live for backward; a transient output is already freed. */
  saved: boolean;
  /** The activation the op read (its gradient is what backward computes), -1 for none. */
  in: number;
  inBytes: number;
  /** Parameters (indices into the parameter table) whose gradients this op produces. */
  params: number[];
  /** Other saved tensors (layer-norm statistics, bf16 weight copies) released when backward passes the op. */
  extras: number[];
  /** No gradient flows to `in` (token ids). */
  noInputGrad?: boolean;
}

export const transformerTraining: Workload = {
  id: 'transformer',
  name: 'Transformer training, variable sequence length',
  description:
    'GPT-style decoder trained with bf16 autocast and Adam; each step draws a sequence length, so ' +
    'activations (linear in it) and attention matrices (quadratic) grow and shrink between steps.',
  params: [
    { key: 'width', label: 'Model width (d_model)', default: 1024, min: 64, max: 8192, integer: true, unit: 'features', help: 'hidden size; weights grow with its square, activations linearly' },
    { key: 'layers', label: 'Layers', default: 12, min: 1, max: 96, integer: true, unit: 'count', help: 'transformer blocks, each saving its activations for backward' },
    { key: 'heads', label: 'Attention heads', default: 16, min: 1, max: 128, integer: true, unit: 'count', help: 'each head keeps a seq x seq attention matrix (no flash attention)' },
    { key: 'batch', label: 'Batch size', default: 8, min: 1, max: 256, integer: true, unit: 'count', help: 'sequences per step' },
    { key: 'minSeq', label: 'Min sequence length', default: 128, min: 1, max: 32768, integer: true, unit: 'tokens', help: 'shortest sequence length a step may draw' },
    { key: 'maxSeq', label: 'Max sequence length', default: 2048, min: 1, max: 32768, integer: true, unit: 'tokens', help: 'longest sequence length a step may draw (uniformly between min and max)' },
    { key: 'steps', label: 'Training steps', default: 20, min: 1, max: 200, integer: true, unit: 'steps', help: 'forward, backward and optimizer step, each with a fresh sequence length' },
    SEED_PARAM,
  ],
  check(v) {
    requireOrdered(v, 'minSeq', 'maxSeq');
  },
  generate(given) {
    const p = resolveParams(transformerTraining, given);
    const d = p.width!;
    const heads = p.heads!;
    const batch = p.batch!;
    const rng = new Prng(p.seed!);
    const t = new TensorTracker();

    // Parameter table: fp32 master weights plus Adam's exp_avg and exp_avg_sq, all persistent.
    const paramBytes: number[] = [];
    const paramIds: number[] = [];
    const addParam = (elements: number): number => {
      paramBytes.push(elements * FP32);
      paramIds.push(t.alloc(elements * FP32));
      return paramBytes.length - 1;
    };
    const wte = addParam(VOCAB * d);
    const layerParams = Array.from({ length: p.layers! }, () => ({
      ln1: [addParam(d), addParam(d)],
      qkv: [addParam(3 * d * d), addParam(3 * d)],
      proj: [addParam(d * d), addParam(d)],
      ln2: [addParam(d), addParam(d)],
      up: [addParam(4 * d * d), addParam(4 * d)],
      down: [addParam(4 * d * d), addParam(d)],
    }));
    const lnf = [addParam(d), addParam(d)];
    const expAvgSq: number[] = [];
    for (const bytes of paramBytes) {
      t.alloc(bytes); // exp_avg
      expAvgSq.push(t.alloc(bytes));
    }

    const seqs: number[] = [];
    for (let step = 0; step < p.steps!; step++) {
      t.markStep();
      const seq = rng.int(p.minSeq!, p.maxSeq!);
      seqs.push(seq);
      const bsd = batch * seq * d * BF16;
      const ops: ForwardOp[] = [];
      // Each op allocates its output reading `input`; a matmul also gets autocast's bf16 copy of its weight.
      const op = (bytes: number, input: number, saved: boolean, params: number[] = [], extras: number[] = []): number => {
        const out = t.alloc(bytes, input);
        ops.push({ out, saved, in: input, inBytes: t.sizeOf(input), params, extras });
        return out;
      };
      const castWeight = (param: number): number => t.alloc(paramBytes[param]! / 2, paramIds[param]!);
      const layerNorm = (x: number, params: number[]): number => {
        const stats = t.alloc(batch * seq * 2 * FP32, x); // mean and rstd, saved for backward
        return op(bsd, x, true, params, [stats]);
      };
      const linear = (bytes: number, x: number, saved: boolean, params: number[]): number => {
        const w = castWeight(params[0]!);
        return op(bytes, x, saved, params, [w]);
      };

      // Forward.
      const tokens = t.alloc(batch * seq * INT64);
      let x = op(bsd, tokens, true, [wte]);
      ops[ops.length - 1]!.noInputGrad = true;
      for (const lp of layerParams) {
        const ln1 = layerNorm(x, lp.ln1);
        const qkv = linear(3 * bsd, ln1, true, lp.qkv);
        const scores = op(batch * heads * seq * seq * BF16, qkv, false);
        const probs = op(batch * heads * seq * seq * BF16, scores, true);
        t.free(scores);
        const attn = op(bsd, probs, true);
        const proj = linear(bsd, attn, false, lp.proj);
        const mid = op(bsd, proj, true); // residual add
        t.free(proj);
        const ln2 = layerNorm(mid, lp.ln2);
        const up = linear(4 * bsd, ln2, true, lp.up);
        const gelu = op(4 * bsd, up, true);
        const down = linear(bsd, gelu, false, lp.down);
        x = op(bsd, down, true); // residual add
        t.free(down);
      }
      const lnOut = layerNorm(x, lnf);
      const logits = linear(batch * seq * VOCAB * BF16, lnOut, false, [wte]); // tied LM head
      const logProbs = op(batch * seq * VOCAB * FP32, logits, true); // log_softmax in fp32
      t.free(logits);
      const loss = op(FP32, logProbs, true);

      // Backward: walk the ops in reverse; each turns the gradient of its output into the gradient
      // of its input and releases what it saved. Weight gradients appear on first use (set_to_none).
      const grads = new Map<number, number>();
      let g = t.alloc(FP32, loss);
      for (let i = ops.length - 1; i >= 0; i--) {
        const o = ops[i]!;
        for (const param of o.params) {
          if (!grads.has(param)) grads.set(param, t.alloc(paramBytes[param]!, t.isLive(o.in) ? o.in : g));
        }
        const next = o.noInputGrad ? -1 : t.alloc(o.inBytes, o.saved ? o.out : g);
        t.free(g);
        if (o.saved) t.free(o.out);
        for (const e of o.extras) t.free(e);
        if (o.noInputGrad) t.free(o.in);
        g = next;
      }

      // Adam (foreach): sqrt(exp_avg_sq) makes one temporary per parameter before the update.
      const temps = expAvgSq.map((v) => t.alloc(t.sizeOf(v), v));
      for (const tmp of temps) t.free(tmp);
      // zero_grad(set_to_none=True)
      for (const grad of grads.values()) t.free(grad);
    }
    return t.finish(
      `Transformer training: ${p.layers} layers, width ${d}, ${heads} heads, batch ${batch}, ` +
        `${p.steps} steps with sequence lengths ${Math.min(...seqs)}-${Math.max(...seqs)} ` +
        `(drawn from ${p.minSeq}-${p.maxSeq}), seed ${p.seed}`,
    );
  },
};
