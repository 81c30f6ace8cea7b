import { describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG, type AllocatorConfig } from '../../src/allocator/config';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { MiB } from '../../src/allocator/constants';
import { Action } from '../../src/allocator/trace-action';
import { replay } from '../../src/trace/replay/replay';
import { RequestKind, type RequestStream } from '../../src/trace/stream/request-stream';
import {
  bigSmallAlternation,
  kvCacheGrowth,
  logUniformSizes,
  mixtureOfExperts,
  Prng,
  resolveParams,
  transformerTraining,
  WORKLOADS,
  workloadById,
  WorkloadParamError,
} from '../../src/trace/stream/workloads';
import { splitTokens } from '../../src/trace/stream/workloads/mixture-of-experts';
import { TensorTracker } from '../../src/trace/stream/workloads/tensor-tracker';

const CAP_80GB = { kind: 'device', bytes: 80e9 } as const;
const replayAt80 = (s: RequestStream, config: AllocatorConfig = DEFAULT_CONFIG) =>
  replay(s, { config, capacity: CAP_80GB, addresses: 'simulated' });

/** Checks the stream's bookkeeping; returns live requested bytes at the peak and at the end. */
function checkWellFormed(s: RequestStream): { peak: number; end: number } {
  const size = new Float64Array(s.idCount); // requested bytes while live, else 0
  const seen = new Uint8Array(s.idCount);
  const stream = new Float64Array(s.idCount);
  let live = 0;
  let peak = 0;
  for (let i = 0; i < s.length; i++) {
    const id = s.id[i]!;
    const bytes = s.size[i]!;
    if (!(id >= 0 && id < s.idCount)) throw new Error(`request ${i}: id ${id} out of range`);
    if (s.kind[i] === RequestKind.alloc) {
      if (seen[id]) throw new Error(`request ${i}: id ${id} allocated twice`);
      if (!(Number.isInteger(bytes) && bytes >= 1)) throw new Error(`request ${i}: size ${bytes} is not a whole positive number of bytes`);
      const input = s.input[i]!;
      if (input !== -1 && size[input] === 0) throw new Error(`request ${i}: input ${input} is not live`);
      // An op reads a block of its own stream (log-uniform spreads tensors over several).
      if (input !== -1 && stream[input] !== s.stream[i]) throw new Error(`request ${i}: input ${input} is on another stream`);
      stream[id] = s.stream[i]!;
      seen[id] = 1;
      size[id] = bytes;
      live += bytes;
      peak = Math.max(peak, live);
    } else {
      if (size[id] === 0) throw new Error(`request ${i}: free of ${id}, which is not live`);
      if (size[id] !== bytes) throw new Error(`request ${i}: free of ${id} with ${bytes} bytes, alloc had ${size[id]}`);
      size[id] = 0;
      live -= bytes;
    }
  }
  return { peak, end: live };
}

const sameStream = (a: RequestStream, b: RequestStream): boolean =>
  a.length === b.length &&
  a.idCount === b.idCount &&
  a.kind.every((x, i) => x === b.kind[i]) &&
  a.id.every((x, i) => x === b.id[i]) &&
  a.size.every((x, i) => x === b.size[i]) &&
  a.stream.every((x, i) => x === b.stream[i]) &&
  a.input.every((x, i) => x === b.input[i]) &&
  a.notes.join() === b.notes.join();

describe.each(WORKLOADS.map((w) => [w.id, w] as const))('workload %s', (_, w) => {
  const stream = w.generate({});

  test('declares sane parameters with a seed', () => {
    const keys = w.params.map((p) => p.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain('seed');
    for (const p of w.params) {
      expect(p.min).toBeLessThanOrEqual(p.default);
      expect(p.default).toBeLessThanOrEqual(p.max);
      if (p.integer) expect(Number.isInteger(p.default)).toBe(true);
      expect(p.help.length).toBeGreaterThan(0);
    }
    expect(workloadById(w.id)).toBe(w);
  });

  test('is deterministic, and the seed matters', () => {
    expect(sameStream(w.generate({}), stream)).toBe(true);
    expect(sameStream(w.generate({ seed: 2 }), stream)).toBe(false);
    expect(stream.notes).toHaveLength(1);
  });

  test('makes at least 6,000 requests by default, well formed', () => {
    expect(stream.length).toBeGreaterThanOrEqual(6000);
    const { peak } = checkWellFormed(stream);
    expect(peak).toBeLessThan(40e9);
    expect(stream.failedInRecording.size).toBe(0);
  });

  test('replays under the default config on an 80 GB device without OOM', () => {
    const r = replayAt80(stream);
    expect(r.ooms).toEqual([]);
    expect(r.stats['num_ooms']).toBe(0);
  });

  test('rejects bad parameter values, naming the parameter', () => {
    const p = w.params.find((q) => q.integer && q.key !== 'seed')!;
    const cases: Record<string, number>[] = [
      { [p.key]: p.max + 1 },
      { [p.key]: p.min - 1 },
      { [p.key]: Number.NaN },
      { [p.key]: Number.POSITIVE_INFINITY },
      { [p.key]: p.min + 0.5 },
    ];
    for (const given of cases) {
      expect(() => resolveParams(w, given)).toThrow(WorkloadParamError);
      expect(() => w.generate(given)).toThrow(new RegExp(`"${p.key}".*${p.min}.*${p.max}`));
    }
    expect(() => resolveParams(w, { nosuch: 1 })).toThrow(/"nosuch"/);
    try {
      resolveParams(w, { seed: -1 });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(WorkloadParamError);
      expect((e as WorkloadParamError).key).toBe('seed');
      expect((e as Error).message).toMatch(/-1/);
    }
    expect(resolveParams(w, {})).toEqual(Object.fromEntries(w.params.map((q) => [q.key, q.default])));
  });
});

test('constraints between parameters', () => {
  expect(() => resolveParams(transformerTraining, { minSeq: 4096, maxSeq: 1024 })).toThrow(/"minSeq".*"maxSeq"/);
  expect(() => resolveParams(mixtureOfExperts, { experts: 4, topK: 8 })).toThrow(/"topK".*"experts"/);
  expect(() => resolveParams(logUniformSizes, { minSize: 1e6, maxSize: 1e3 })).toThrow(/"minSize"/);
  expect(WORKLOADS.map((w) => w.id)).toEqual(['transformer', 'kv-cache', 'moe', 'big-small', 'log-uniform']);
  expect(workloadById('nope')).toBeUndefined();
});

describe('each workload is what it claims', () => {
  test('transformer: an attention matrix of batch x heads x seq^2 bf16, activations growing faster than seq', () => {
    const params = { batch: 4, heads: 8, layers: 4, width: 512, steps: 2 };
    const fixed = (seq: number): RequestStream => transformerTraining.generate({ ...params, minSeq: seq, maxSeq: seq });
    const s512 = fixed(512);
    const s1024 = fixed(1024);
    const sizes = new Set(s1024.size);
    expect(sizes.has(4 * 8 * 1024 * 1024 * 2)).toBe(true);
    expect(new Set(s512.size).has(4 * 8 * 1024 * 1024 * 2)).toBe(false);
    // What is live at the end is the persistent state (weights, Adam), the same for both lengths;
    // the activation peak above it grows more than linearly (attention is quadratic), at most as seq^2.
    const a = checkWellFormed(s512);
    const b = checkWellFormed(s1024);
    expect(a.end).toBe(b.end);
    expect(a.end).toBeGreaterThan(0);
    const ratio = (b.peak - b.end) / (a.peak - a.end);
    expect(ratio).toBeGreaterThan(2);
    expect(ratio).toBeLessThanOrEqual(4);
    // With a variable length, the attention matrices vary in size from step to step.
    const varied = transformerTraining.generate({ ...params, minSeq: 128, maxSeq: 1024, steps: 6 });
    const attention = new Set<number>();
    for (let i = 0; i < varied.length; i++) {
      const seq = Math.sqrt(varied.size[i]! / (4 * 8 * 2));
      if (varied.kind[i] === RequestKind.alloc && Number.isInteger(seq) && seq >= 128) attention.add(seq);
    }
    expect(attention.size).toBeGreaterThan(3);
  });

  test.each<Record<string, number>>([{}, { chunk: 32, headDim: 64, kvHeads: 2 }])('kv-cache: every reallocation is one chunk larger than the buffer it copies (%o)', (given) => {
    const s = kvCacheGrowth.generate(given);
    const p = resolveParams(kvCacheGrowth, given);
    const chunkBytes = p.chunk! * 2 * p.kvHeads! * p.headDim! * 2;
    const sizeOf = new Map<number, number>();
    // KV buffers: a prefill writes one per layer, all reading the prompt's hidden states; a
    // reallocation reads a KV buffer.
    const kv = new Set<number>();
    const problems: string[] = [];
    let growths = 0;
    for (let i = 0; i < s.length; i++) {
      if (s.kind[i] !== RequestKind.alloc) continue;
      sizeOf.set(s.id[i]!, s.size[i]!);
      const input = s.input[i]!;
      if (kv.has(input)) {
        growths++;
        if (s.size[i]! - sizeOf.get(input)! !== chunkBytes) problems.push(`request ${i} grows by ${s.size[i]! - sizeOf.get(input)!}`);
        // The old buffer goes at once.
        if (s.kind[i + 1] !== RequestKind.free || s.id[i + 1] !== input) problems.push(`request ${i}: old buffer not freed next`);
        kv.add(s.id[i]!);
      } else if (input >= 0 && !kv.has(s.id[i]!)) {
        let l = 0;
        while (l < p.layers! && s.kind[i + l] === RequestKind.alloc && s.input[i + l] === input) l++;
        if (l === p.layers!) {
          for (let j = i; j < i + l; j++) {
            kv.add(s.id[j]!);
            if (s.size[j]! % chunkBytes !== 0) problems.push(`request ${j}: prefill buffer of ${s.size[j]} bytes`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    // Each reallocation of a sequence copies every layer's buffer; the note counts reallocations.
    expect(growths % p.layers!).toBe(0);
    expect(growths / p.layers!).toBeGreaterThan(50);
    expect(s.notes[0]).toContain(` ${growths / p.layers!} reallocations`);
  });

  test('moe: expert input buffers of a layer add up to tokens x top-k x hidden, split unevenly', () => {
    const imbalance = (balance: number): number => {
      const params = { tokens: 4096, experts: 16, topK: 4, hidden: 256, layers: 2, steps: 10, balance };
      const s = mixtureOfExperts.generate(params);
      checkWellFormed(s);
      let worst = 0;
      let layersSeen = 0;
      for (let i = 0; i < s.length; i++) {
        // The router's logits (tokens x experts fp32) read the layer input x, as do the expert gathers.
        // Top-k weights and indices both read them next, which tells them apart from an expert
        // buffer of the same size (512 tokens here).
        if (s.kind[i] !== RequestKind.alloc || s.size[i] !== 4096 * 16 * 4) continue;
        if (s.input[i + 1] !== s.id[i] || s.input[i + 2] !== s.id[i]) continue;
        const x = s.input[i]!;
        const gathers: number[] = [];
        for (let j = i + 1; j < s.length && !(s.kind[j] === RequestKind.free && s.id[j] === x); j++) {
          if (s.kind[j] === RequestKind.alloc && s.input[j] === x) gathers.push(s.size[j]!);
        }
        layersSeen++;
        expect(gathers.reduce((a, b) => a + b, 0)).toBe(4096 * 4 * 256 * 2);
        expect(gathers.length).toBeLessThanOrEqual(16);
        for (const g of gathers) expect(g).toBeLessThanOrEqual(4096 * 256 * 2); // no expert sees a token twice
        worst = Math.max(worst, Math.max(...gathers) / Math.min(...gathers));
      }
      expect(layersSeen).toBe(20);
      return worst;
    };
    const skewed = imbalance(0.3);
    const even = imbalance(100);
    expect(even).toBeGreaterThan(1);
    expect(skewed).toBeGreaterThan(4 * even);
  });

  test('big/small: small tensors get pinned in split big segments by default, never with max_split_size_mb', () => {
    const s = bigSmallAlternation.generate({});
    const pinned = (config: AllocatorConfig): { pinned: number; inactiveSplit: number } => {
      const r = replayAt80(s, config);
      const segments = new Map<number, number>();
      let count = 0;
      for (let i = 0; i < r.events.length; i++) {
        const action = r.events.action[i]!;
        const addr = r.events.addr[i]!;
        if (action === Action.segment_alloc) segments.set(addr, r.events.size[i]!);
        else if (action === Action.segment_free) segments.delete(addr);
        else if (action === Action.alloc && r.events.size[i]! < 8 * MiB) {
          for (const [base, size] of segments) {
            if (addr >= base && addr < base + size) {
              if (size >= 64 * MiB) count++;
              break;
            }
          }
        }
      }
      return { pinned: count, inactiveSplit: r.stats['inactive_split_bytes.all.peak']! };
    };
    const byDefault = pinned(DEFAULT_CONFIG);
    const capped = pinned(parseAllocConf('max_split_size_mb:40').config);
    expect(byDefault.pinned).toBeGreaterThan(500);
    expect(capped.pinned).toBe(0);
    expect(byDefault.inactiveSplit).toBeGreaterThan(10 * capped.inactiveSplit);
  });

  test('log-uniform: sizes spread evenly over the log range, live count hovering at the target', () => {
    const s = logUniformSizes.generate({ minSize: 1024, maxSize: 1024 * 1024 * 1024, events: 20000, liveTarget: 300, streams: 3 });
    checkWellFormed(s);
    const logs: number[] = [];
    let live = 0;
    let minLate = Infinity;
    let maxLate = 0;
    const streams = new Set<number>();
    for (let i = 0; i < s.length; i++) {
      if (s.kind[i] === RequestKind.alloc) {
        logs.push(Math.log2(s.size[i]!));
        streams.add(s.stream[i]!);
        live++;
      } else live--;
      if (i > 5000) {
        minLate = Math.min(minLate, live);
        maxLate = Math.max(maxLate, live);
      }
    }
    expect(streams).toEqual(new Set([0, 1, 2]));
    expect(Math.min(...logs)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...logs)).toBeLessThanOrEqual(30);
    // 2^10..2^30: each decade of the exponent should hold about a third of the requests.
    for (const [lo, hi] of [[10, 16.67], [16.67, 23.33], [23.33, 30]] as const) {
      const share = logs.filter((x) => x >= lo && x < hi).length / logs.length;
      expect(share).toBeGreaterThan(0.3);
      expect(share).toBeLessThan(0.37);
    }
    expect(minLate).toBeGreaterThan(300 * 0.8);
    expect(maxLate).toBeLessThan(300 * 1.2);
  });
});

describe('helpers', () => {
  test('the PRNG is seeded, in range and roughly uniform', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const xs = Array.from({ length: 1000 }, () => a.next());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b.next()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(Math.abs(xs.reduce((s, x) => s + x, 0) / 1000 - 0.5)).toBeLessThan(0.05);
    const ints = new Set(Array.from({ length: 500 }, () => a.int(3, 7)));
    expect(ints).toEqual(new Set([3, 4, 5, 6, 7]));
    const d = a.dirichlet(8, 0.5);
    expect(d.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12);
    const normals = Array.from({ length: 4000 }, () => a.normal());
    const mean = normals.reduce((s, x) => s + x, 0) / normals.length;
    const variance = normals.reduce((s, x) => s + (x - mean) ** 2, 0) / normals.length;
    expect(Math.abs(mean)).toBeLessThan(0.06);
    expect(Math.abs(variance - 1)).toBeLessThan(0.08);
    const gammas = Array.from({ length: 4000 }, () => a.gamma(3));
    expect(Math.abs(gammas.reduce((s, x) => s + x, 0) / gammas.length - 3)).toBeLessThan(0.15);
  });

  test('a stream too long for the page is refused, naming the parameter to lower', () => {
    const t = new TensorTracker('steps', 10);
    for (let i = 0; i < 5; i++) t.free(t.alloc(100));
    expect(() => t.alloc(100)).toThrow(WorkloadParamError);
    expect(() => t.alloc(100)).toThrow(/more than 10 requests; lower "steps"/);
    // Generator bugs fail at generation time, not as a confusing replay.
    const u = new TensorTracker();
    const id = u.alloc(10);
    u.free(id);
    expect(() => u.free(id)).toThrow(/not live/);
    expect(() => u.alloc(10, id)).toThrow(/not live/);
    expect(u.alloc(0.4)).toBe(1);
    expect(u.sizeOf(1)).toBe(1); // whole bytes, at least one
  });

  test('splitTokens keeps the total and the per-expert cap', () => {
    expect(splitTokens(10, [0.5, 0.5], 10)).toEqual([5, 5]);
    expect(splitTokens(7, [1 / 3, 1 / 3, 1 / 3], 7).reduce((s, x) => s + x, 0)).toBe(7);
    // Top-2 over 3 experts with 6 tokens: 12 assignments, no expert above 6.
    const c = splitTokens(12, [0.9, 0.05, 0.05], 6);
    expect(c.reduce((s, x) => s + x, 0)).toBe(12);
    expect(Math.max(...c)).toBeLessThanOrEqual(6);
  });
});
