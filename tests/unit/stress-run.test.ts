// The GPU stress plans, checked without a GPU: blocks land on disjoint, in-bounds arena words at any
// scale, each batch fills what it allocated, verifies what it freed and sweeps the live blocks, and
// the plans run on a CPU model of the kernels find no mismatch, unless the fault switch makes blocks
// overlap.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { GiB, MiB } from '../../src/allocator/constants';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { ArenaLayout } from '../../src/gpu/stress/arena-layout';
import { blockSpans, SPAN_U32S } from '../../src/gpu/stress/block-spans';
import { FRAME_BYTES, PhysicalFrames } from '../../src/allocator/placement/physical-frames';
import { OP_U32S, StressRun, type BatchPlan } from '../../src/gpu/stress/stress-run';
import { SWEEP_BATCHES } from '../../src/gpu/stress/verify-table';
import { GROUP_U32S, GROUP_WORDS, workGroups } from '../../src/gpu/stress/work-groups';
import { RequestStreamBuilder, type RequestStream } from '../../src/trace/stream/request-stream';

/** Log-uniform sizes from 1 KiB to 256 MiB, random frees, a seeded LCG (tests only). */
function randomStream(seed: number, requests: number): RequestStream {
  let s = seed >>> 0;
  const rand = (): number => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const b = new RequestStreamBuilder();
  const live: { id: number; size: number }[] = [];
  while (b.length < requests) {
    if (live.length > 0 && rand() < 0.45) {
      const [x] = live.splice(Math.floor(rand() * live.length), 1);
      b.free(x!.id, x!.size, 0);
    } else {
      const size = Math.round(2 ** (10 + rand() * 18));
      const id = b.newId();
      const input = live.length > 0 ? live[live.length - 1]!.id : -1;
      b.alloc(id, size, 0, -1, input);
      live.push({ id, size });
    }
  }
  return b.finish();
}

interface Range { start: number; end: number; tag: number }

function ranges(spans: ArrayLike<number>): Range[] {
  const out: Range[] = [];
  for (let c = 0; c < spans.length; c += SPAN_U32S) out.push({ start: spans[c]!, end: spans[c]! + spans[c + 1]!, tag: spans[c + 2]! });
  return out;
}

function overlaps(spans: Uint32Array): number {
  const r = ranges(spans).sort((a, b) => a.start - b.start);
  let n = 0;
  for (let i = 1; i < r.length; i++) if (r[i]!.start < r[i - 1]!.end) n++;
  return n;
}

/** A verify entry a freed block left blank (start 0, no words: the kernel checks nothing there). */
function blank(table: Uint32Array, c: number): boolean {
  return table[c] === 0 && table[c + 1] === 0 && table[c + 2] === 0 && table[c + 3] === 0;
}

/** The verify table less its blank entries. */
function withoutBlanks(table: Uint32Array): number[] {
  const out: number[] = [];
  for (let c = 0; c < table.length; c += SPAN_U32S) if (!blank(table, c)) out.push(...table.subarray(c, c + SPAN_U32S));
  return out;
}

const key = (a: ArrayLike<number>, i: number): string => `${a[i]}:${a[i + 2]}`;

/** The (start, tag) keys of a table's spans, blanks left out. */
function keys(table: Uint32Array): Set<string> {
  const out = new Set<string>();
  for (let c = 0; c < table.length; c += SPAN_U32S) if (!blank(table, c)) out.add(key(table, c));
  return out;
}

/** Problems with a plan, given the live spans before and after it, as strings (plain loops: plans hold thousands of spans). */
function planProblems(plan: BatchPlan, before: Uint32Array, after: Uint32Array, arenaWords: number): string[] {
  const problems: string[] = [];
  for (let c = 0; c < after.length; c += SPAN_U32S) {
    const count = after[c + 1]!;
    if (after[c]! + count > arenaWords) problems.push(`span ${c / SPAN_U32S} ends past the arena`);
    if (count === 0) problems.push(`span ${c / SPAN_U32S} has no words`);
  }
  if (overlaps(after) > 0) problems.push('live spans overlap');
  const [was, live] = [keys(before), keys(after)];
  // Everything filled or swept is live; every op writes a filled span; what was freed had been live.
  const filled = keys(plan.fill);
  for (const k of filled) if (!live.has(k)) problems.push('a filled span is not live');
  for (const k of keys(plan.verify)) if (!live.has(k)) problems.push('a swept span is not live');
  for (let e = 0; e < plan.op.length; e += OP_U32S) if (!filled.has(key(plan.op, e))) problems.push('an op writes an unfilled span');
  for (const k of keys(plan.freed)) if (!was.has(k) || live.has(k)) problems.push('a verified freed span was not live before the batch, or still is');
  return problems;
}

/**
 * The kernels on the CPU, as shaders/*.wgsl run them: words of `arenaWords`, each plan run in the
 * GPU's order, each table through its workgroup shares (work-groups.ts) and each share's part of its
 * spans (arena.wgsl's `part` and `partInput`), so a share cut wrong leaves words unwritten or unread.
 */
class CpuArena {
  readonly words: Uint32Array;
  mismatches = 0;

  constructor(arenaWords: number) {
    this.words = new Uint32Array(arenaWords);
  }

  run(plan: BatchPlan): void {
    this.verify(plan.freed);
    this.shares(plan.fill, SPAN_U32S, (e, g) => this.write(part(plan.fill, e, g)));
    this.shares(plan.op, OP_U32S, (e, g) => {
      const output = part(plan.op, e, g);
      const input = partInput(plan.op, e + SPAN_U32S, g);
      this.check({ ...input, count: Math.min(input.count, output.count) });
      this.write(output);
    });
    this.verify(plan.verify);
  }

  private verify(table: Uint32Array): void {
    this.shares(table, SPAN_U32S, (e, g) => this.check(part(table, e, g)));
  }

  /** Calls `each` with every entry's offset in `table` and the share that holds it, share by share. */
  private shares(table: Uint32Array, stride: number, each: (entry: number, group: Uint32Array) => void): void {
    const groups = workGroups(table, stride);
    for (let g = 0; g < groups.length; g += GROUP_U32S) {
      const group = groups.subarray(g, g + GROUP_U32S);
      for (let k = group[0]!; k < group[0]! + group[1]!; k++) each(k * stride, group);
    }
  }

  private check(s: Span): void {
    for (let i = 0; i < s.count; i++) if (this.words[s.start + i] !== pattern(s.tag, s.first + i)) this.mismatches++;
  }

  private write(s: Span): void {
    for (let i = 0; i < s.count; i++) this.words[s.start + i] = pattern(s.tag, s.first + i);
  }
}

interface Span { start: number; count: number; tag: number; first: number }

/** arena.wgsl's `part`: the words of the span at `at` that share `g` handles. */
function part(t: Uint32Array, at: number, g: Uint32Array): Span {
  const s = { start: t[at]!, count: t[at + 1]!, tag: t[at + 2]!, first: t[at + 3]! };
  return g[1] !== 1 ? s : { start: s.start + g[2]!, count: g[3]!, tag: s.tag, first: s.first + g[2]! };
}

/** arena.wgsl's `partInput`: the input words the op reads for that part of its output. */
function partInput(t: Uint32Array, at: number, g: Uint32Array): Span {
  const s = { start: t[at]!, count: t[at + 1]!, tag: t[at + 2]!, first: t[at + 3]! };
  if (g[1] !== 1) return s;
  const skip = Math.min(g[2]!, s.count);
  return { start: s.start + skip, count: s.count - skip, tag: s.tag, first: s.first + skip };
}

/** shaders/arena.wgsl's pattern. */
function pattern(tag: number, index: number): number {
  return (Math.imul(tag, 0x9e3779b1) + index) >>> 0;
}

describe('arena layout', () => {
  test('1:1 when the arena holds the device; scaled and monotone otherwise', () => {
    expect(new ArenaLayout(GiB / 4, GiB).oneToOne).toBe(true);
    const scaled = new ArenaLayout((64 * MiB) / 4, 80 * GiB);
    expect(scaled.oneToOne).toBe(false);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 80 * 2 ** 30 }), fc.integer({ min: 0, max: 80 * 2 ** 30 }), (a, b) => {
        if (a <= b) expect(scaled.wordAt(a)).toBeLessThanOrEqual(scaled.wordAt(b));
      }),
    );
    expect(scaled.wordAt(80 * GiB)).toBe((64 * MiB) / 4);
  });

  test('a block over discontiguous frames gets one span per run of adjacent frames, words in order', () => {
    const layout = new ArenaLayout(GiB / 4, GiB);
    const spans = blockSpans(layout, Int32Array.from([5, 6, 2]), 0, 3 * FRAME_BYTES, 7);
    const r = ranges(spans);
    // Frames 5 and 6 merge into one 4 MiB span; frame 2 is another.
    expect(r.map((x) => x.end - x.start)).toEqual([(2 * FRAME_BYTES) / 4, FRAME_BYTES / 4]);
    expect(r[0]!.start).toBe((5 * FRAME_BYTES) / 4);
    expect(r.at(-1)!.end).toBe((3 * FRAME_BYTES) / 4);
    let first = 0;
    for (let c = 0; c < spans.length; c += SPAN_U32S) {
      expect(spans[c + 3]).toBe(first);
      first += spans[c + 1]!;
    }
    expect(first).toBe((3 * FRAME_BYTES) / 4);
  });

  test('physical frames: lowest first, returned on unmap, refused when short', () => {
    const frames = new PhysicalFrames(10 * FRAME_BYTES);
    expect([...frames.map(1, 3 * FRAME_BYTES)!]).toEqual([0, 1, 2]);
    expect([...frames.map(2, FRAME_BYTES)!]).toEqual([3]);
    frames.unmap(1);
    expect([...frames.map(3, 2 * FRAME_BYTES)!]).toEqual([0, 1]);
    expect(frames.map(4, 8 * FRAME_BYTES)).toBeNull();
    expect(frames.freeFrames).toBe(7);
  });
});

test('work groups cover every word of the table once, in order, at most GROUP_WORDS words a group unless one whole span', () => {
  for (const [arenaBytes, deviceBytes] of [[(64 * MiB) / 4, 80 * GiB], [GiB, 8 * GiB]] as const) {
    const run = new StressRun(randomStream(21, 3000), { config: DEFAULT_CONFIG, deviceBytes, arenaWords: arenaBytes / 4 });
    const plan = run.step(3000);
    const table = plan.verify;
    const groups = workGroups(table, SPAN_U32S);
    // The next word expected: entry `next`, word `offset` of it.
    let [next, offset] = [0, 0];
    let split = 0;
    for (let g = 0; g < groups.length; g += GROUP_U32S) {
      const [first, count, from, words] = groups.subarray(g, g + GROUP_U32S);
      expect([first, from]).toEqual([next, offset]);
      if (count === 1) {
        const spanWords = table[first! * SPAN_U32S + 1]!;
        expect(words).toBeLessThanOrEqual(Math.max(GROUP_WORDS, from === 0 ? spanWords : 0));
        if (words! < spanWords) split++;
        [next, offset] = from! + words! === spanWords ? [first! + 1, 0] : [first!, from! + words!];
      } else {
        let sum = 0;
        for (let e = first!; e < first! + count!; e++) sum += table[e * SPAN_U32S + 1]!;
        expect(sum).toBeLessThanOrEqual(GROUP_WORDS);
        [next, offset] = [first! + count!, 0];
      }
    }
    expect([next, offset]).toEqual([table.length / SPAN_U32S, 0]);
    if (arenaBytes < GiB) expect(groups.length / GROUP_U32S).toBeLessThan(table.length / SPAN_U32S); // tiny blocks share workgroups
    else expect(split).toBeGreaterThan(0); // big ones are spread over several
  }
});

describe('stress run', () => {
  test.each([
    ['1:1', GiB, 8 * GiB],
    ['scaled 1:1280', 64 * MiB, 80 * GiB],
  ])('live blocks stay disjoint and in bounds (%s)', (_, arenaBytes, deviceBytes) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 20, max: 300 }), (seed, batch) => {
        const run = new StressRun(randomStream(seed, 600), { config: DEFAULT_CONFIG, deviceBytes, arenaWords: arenaBytes / 4 });
        const problems: string[] = [];
        let live = run.liveSpans();
        while (!run.done) {
          const plan = run.step(batch);
          const after = run.liveSpans();
          problems.push(...planProblems(plan, live, after, arenaBytes / 4));
          live = after;
        }
        expect(problems.slice(0, 5)).toEqual([]);
      }),
      { numRuns: 10 },
    );
  });

  test('expandable_segments: pages map onto frames and back, blocks stay disjoint under memory pressure', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), (seed) => {
        const deviceBytes = GiB;
        const config = parseAllocConf('expandable_segments:True').config;
        const run = new StressRun(randomStream(seed, 1500), { config, deviceBytes, arenaWords: (64 * MiB) / 4 });
        const problems: string[] = [];
        let live = run.liveSpans();
        while (!run.done) {
          const plan = run.step(50);
          const after = run.liveSpans();
          problems.push(...planProblems(plan, live, after, (64 * MiB) / 4));
          live = after;
          // Every mapped byte holds frames, and no more.
          const frames = run.placement.frames;
          if (frames.frameCount - frames.freeFrames !== run.allocator.reservedBytes / FRAME_BYTES) problems.push('frames and mappings disagree');
        }
        expect(problems.slice(0, 5)).toEqual([]);
        expect(run.allocator.memoryStats()['num_device_free']).toBeGreaterThan(0); // pages were unmapped
      }),
      { numRuns: 8 },
    );
  });

  test('a scaled arena leaves small blocks wordless and says how many', () => {
    const run = new StressRun(randomStream(3, 4000), { config: DEFAULT_CONFIG, deviceBytes: 80 * GiB, arenaWords: (16 * MiB) / 4 });
    while (!run.done) run.step(100);
    expect(run.wordlessBlocks).toBeGreaterThan(0);
    expect(run.wordlessBlocks).toBeLessThan(run.liveBlocks);
  });

  test('the allocator decides as in a plain replay: same stats under a config', () => {
    const stream = randomStream(11, 3000);
    const config = parseAllocConf('max_split_size_mb:64').config;
    const a = new StressRun(stream, { config, deviceBytes: 80 * GiB, arenaWords: (64 * MiB) / 4 });
    while (!a.done) a.step(64);
    const b = new StressRun(stream, { config, deviceBytes: 80 * GiB, arenaWords: GiB / 4 });
    while (!b.done) b.step(999);
    expect(a.allocator.memoryStats()).toEqual(b.allocator.memoryStats());
  });

  test('the overlap fault lays new blocks over live ones', () => {
    const run = new StressRun(randomStream(5, 800), { config: DEFAULT_CONFIG, deviceBytes: 8 * GiB, arenaWords: GiB / 4 });
    run.step(200);
    run.faultOverlap = true;
    let seen = 0;
    while (!run.done) {
      run.step(50);
      seen += overlaps(run.liveSpans());
    }
    expect(seen).toBeGreaterThan(0);
  });

  test.each([
    ['1:1', 16 * MiB, 16 * MiB],
    ['scaled 1:2048', 4 * MiB, 8 * GiB],
  ])('the plans run on a CPU model of the kernels find no mismatch; the fault makes them find some (%s)', (_, arenaBytes, deviceBytes) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 5, max: 120 }), fc.boolean(), (seed, batch, fault) => {
        const run = new StressRun(randomStream(seed, 800), { config: DEFAULT_CONFIG, deviceBytes, arenaWords: arenaBytes / 4 });
        const arena = new CpuArena(arenaBytes / 4);
        run.faultOverlap = fault;
        let overlapped = 0;
        while (!run.done) {
          arena.run(run.step(batch));
          overlapped += overlaps(run.liveSpans());
        }
        arena.run(run.closing());
        // A block laid over a live one leaves words the other cannot explain, found at its free,
        // in a sweep or at the close at the latest.
        if (overlapped === 0) expect(arena.mismatches).toBe(0);
        else expect(arena.mismatches).toBeGreaterThan(0);
        if (!fault) expect(overlapped).toBe(0);
      }),
      { numRuns: 20 },
    );
  });

  test('every freed block is verified as it is freed; every live block is swept within 2 x SWEEP_BATCHES batches', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 5, max: 200 }), (seed, batch) => {
        const run = new StressRun(randomStream(seed, 1500), { config: DEFAULT_CONFIG, deviceBytes: 8 * GiB, arenaWords: GiB / 4 });
        /** Batches since each live span was written or last swept. */
        const unswept = new Map<string, number>();
        let worst = 0;
        let live = keys(run.liveSpans());
        while (!run.done) {
          const plan = run.step(batch);
          const now = keys(run.liveSpans());
          const freed = keys(plan.freed);
          const filled = keys(plan.fill);
          for (const k of live) if (!now.has(k)) expect(freed.has(k)).toBe(true);
          for (const k of unswept.keys()) if (!now.has(k)) unswept.delete(k);
          for (const k of now) unswept.set(k, filled.has(k) ? 0 : (unswept.get(k) ?? 0) + 1);
          for (const k of keys(plan.verify)) unswept.set(k, 0);
          for (const n of unswept.values()) worst = Math.max(worst, n);
          live = now;
        }
        expect(worst).toBeLessThanOrEqual(2 * SWEEP_BATCHES);
      }),
      { numRuns: 10 },
    );
  });

  test('blocks live before the first request are filled by the first batch', () => {
    const b = new RequestStreamBuilder();
    const old = b.newId();
    const fresh = b.newId();
    b.alloc(fresh, 4 * MiB, 0);
    const base = 0x7f00_0000_0000;
    const stream = b.finish({
      initialSegments: [{ addr: base, size: 20 * MiB, stream: 0, small: false }],
      initialBlocks: [{ id: old, addr: base, size: 8 * MiB, requested: 8 * MiB, stream: 0 }],
    });
    const run = new StressRun(stream, { config: DEFAULT_CONFIG, deviceBytes: 8 * GiB, arenaWords: GiB / 4 });
    const plan = run.step(1);
    expect([...plan.fill]).toEqual([...run.liveSpans()]);
    expect(run.closing().verifyBlocks).toBe(2);
  });

  test('the verify table kept from batch to batch holds exactly the live blocks, in allocation order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 5, max: 200 }), (seed, batch) => {
        const stream = randomStream(seed, 1500);
        const kept = new StressRun(stream, { config: DEFAULT_CONFIG, deviceBytes: 8 * GiB, arenaWords: GiB / 4 });
        const fresh = new StressRun(stream, { config: DEFAULT_CONFIG, deviceBytes: 8 * GiB, arenaWords: GiB / 4 });
        let swept = 0;
        while (!kept.done) {
          swept += withoutBlanks(kept.step(batch).verify).length;
          fresh.step(batch);
          // fresh lays out every live block anew; kept's table, blanks aside, must equal it.
          expect(withoutBlanks(kept.closing().verify)).toEqual([...fresh.liveSpans()]);
          expect(kept.closing().verifyBlocks).toBe(kept.liveBlocks);
        }
        expect(swept).toBeGreaterThan(0);
      }),
      { numRuns: 10 },
    );
  });

  test('rebuild fills and verifies every live block', () => {
    const run = new StressRun(randomStream(9, 1000), { config: DEFAULT_CONFIG, deviceBytes: 8 * GiB, arenaWords: GiB / 4 });
    run.step(1000);
    const plan = run.rebuild();
    expect(plan.verifyBlocks).toBe(run.liveBlocks);
    expect([...plan.fill]).toEqual([...plan.verify]);
  });
});
