// What real programs' snapshots bring, file by file and edit by edit: fields of every PyTorch version,
// huge line numbers, actions of a newer PyTorch, snapshots without history, and snapshots edited into
// inconsistency, each opened or refused with a message that names the entry or segment.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ImportError } from '../../src/lib/import-error';
import { NO_HISTORY, replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { writePickle, type PickleWritable } from '../../src/trace/pickle/pickle-writer';
import { UNKNOWN_LINE, type Snapshot, type TraceEntry } from '../../src/trace/snapshot/snapshot';
import { decodeSnapshotFile, decodeSnapshotForReplay, encodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { roundestIn } from '../../src/trace/stream/recorded-cap';
import { loadRealTrace, REAL_MANIFEST } from '../conformance/reference-traces';

const MiB = 2 ** 20;
const SEG = 1 << 30;
const tmp = mkdtempSync(join(tmpdir(), 'splitscope-real-'));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['bin/splitscope.mjs', ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(() => {
  expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
});

/** A small consistent snapshot: one 20 MiB segment, two allocations of which one is freed. */
function small(): Record<string, any> {
  return {
    segments: [
      {
        device: 0, address: SEG, total_size: 20 * MiB, allocated_size: 4 * MiB, active_size: 4 * MiB, requested_size: 4 * MiB,
        stream: 0, segment_type: 'large', segment_pool_id: [0, 0], is_expandable: false, frames: [],
        blocks: [
          { address: SEG, size: 4 * MiB, requested_size: 4 * MiB, state: 'inactive', frames: [] },
          { address: SEG + 4 * MiB, size: 4 * MiB, requested_size: 4 * MiB, state: 'active_allocated', frames: [] },
          { address: SEG + 8 * MiB, size: 12 * MiB, requested_size: 0, state: 'inactive', frames: [] },
        ],
      },
    ],
    device_traces: [
      [
        { action: 'segment_alloc', addr: SEG, size: 20 * MiB, stream: 0, time_us: 1 },
        { action: 'alloc', addr: SEG, size: 4 * MiB, stream: 0, time_us: 2, frames: [{ name: 'f', filename: 'a.py', line: 3 }] },
        { action: 'alloc', addr: SEG + 4 * MiB, size: 4 * MiB, stream: 0, time_us: 3 },
        { action: 'free_requested', addr: SEG, size: 4 * MiB, stream: 0, time_us: 4 },
        { action: 'free_completed', addr: SEG, size: 4 * MiB, stream: 0, time_us: 5 },
      ],
    ],
    allocator_settings: { PYTORCH_CUDA_ALLOC_CONF: '', max_split_size: -1 },
  };
}

const bytesOf = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));
/** `v` as a pickle, as written (bigints where JSON has none). */
const pickled = (v: Record<string, any>): Uint8Array => writePickle(v as PickleWritable);

function refusal(v: unknown): ImportError {
  try {
    decodeSnapshotFile(bytesOf(v));
  } catch (e) {
    if (e instanceof ImportError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('fields of every PyTorch version', () => {
  test("torch.compile's frames with line 2^64 - 1 open, as 'line unknown', the pickle's fast path too", () => {
    const snapshot = loadRealTrace('compiled__default.pickle.gz');
    const lines = snapshot.device_traces[0]!.flatMap((e) => e.frames ?? []).map((f) => f.line);
    expect(lines).toContain(UNKNOWN_LINE);
    // One frame or several, the note's words agree with the count.
    expect(snapshot.notes?.join(' ')).toMatch(/(^|\. )(1 stack frame has no line number .*: it shows|[\d,]+ stack frames have no line number .*: they show) as "line unknown"/);
    const r = cli('replay', 'tests/fixtures/real/compiled__default.pickle.gz', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).stats['num_device_alloc']).toBe(16);
  });

  test('compile_context, user_metadata, FX node fields on frames, forward_frames and external_annotations are read, both ways', () => {
    const v = small();
    const fx = [{ name: 'mm', filename: 'model.py', line: 7, fx_node_op: 'call_function', fx_node_name: 'mm', fx_node_target: 'aten.mm', fx_original_trace: 'y = a @ b' }];
    Object.assign(v.device_traces[0][1], { compile_context: '[0/0]', user_metadata: 'step 1', frames: fx, forward_frames: ['File "model.py", line 7'] });
    v.segments[0].blocks[1].frames = fx;
    v.external_annotations = [{ stage: 'START', name: 'forward', device: 0, time_us: 2 }];
    for (const bytes of [bytesOf(v), pickled(v)]) {
      const snapshot = decodeSnapshotFile(bytes);
      expect(snapshot.device_traces[0]![1]!.frames![0]!.name).toBe('mm');
      expect(snapshot.device_traces[0]![1]!.user_metadata).toBe('step 1');
      const run = replaySnapshot(snapshot);
      expect([run.result.problems, run.result.divergences]).toEqual([[], []]);
      expect(decodeSnapshotForReplay(bytes).traces[0]!.length).toBe(5);
    }
  });

  test('an action of a newer PyTorch is left out with a note; the rest replays', () => {
    const v = small();
    v.device_traces[0].splice(2, 0, { action: 'annotate', addr: 0, size: 0, stream: 0, time_us: 2 }, { action: 'annotate', addr: 0, size: 0, stream: 0 });
    for (const bytes of [bytesOf(v), pickled(v)]) {
      const snapshot = decodeSnapshotFile(bytes);
      expect(snapshot.device_traces[0]!.map((e) => e.action)).toEqual(['segment_alloc', 'alloc', 'alloc', 'free_requested', 'free_completed']);
      expect(snapshot.notes?.join(' ')).toMatch(/2 'annotate'.*newer PyTorch/);
      const { traces } = decodeSnapshotForReplay(bytes);
      expect(traces[0]!.length).toBe(5);
    }
  });

  test('stream handles, times and pool ids past 2^53 are read; addresses past it are refused by name', () => {
    const v = small();
    v.device_traces[0][1].time_us = 2n ** 60n;
    v.device_traces[0][2].stream = 2n ** 60n;
    v.segments[0].segment_pool_id = [0n, 0n];
    const ok = decodeSnapshotFile(pickled(v));
    expect(ok.device_traces[0]![1]!.time_us).toBe(2 ** 60);
    expect(ok.device_traces[0]![2]!.stream).toBe(2 ** 60);
    const far = small();
    far.device_traces[0][1].addr = 2n ** 60n;
    let e: ImportError | null = null;
    try {
      decodeSnapshotFile(pickled(far));
    } catch (err) {
      e = err as ImportError;
    }
    expect(e?.message).toMatch(/device_traces\[0\]\[1\]\.addr is 1152921504606846976, beyond 2\^53/);
  });
});

/**
 * The CUDA graph and MemPool recording as PyTorch 2.12 writes it: a pool_id on every entry (its
 * block's or segment's pool, as the exact replay of the 2.11 file found them) and, so that nothing
 * else can tell, no segment_pool_id on the final segments.
 */
function withEntryPoolIds(snapshot: Snapshot): Snapshot {
  const { stream } = replaySnapshot(snapshot, { addresses: 'recorded' });
  const allocPool = new Map<number, [number, number]>();
  for (let r = 0; r < stream.length; r++) {
    if (stream.kind[r] === RequestKind.alloc && stream.source[r]! >= 0) allocPool.set(stream.source[r]!, [...stream.pools[stream.pool[r]!]!] as [number, number]);
  }
  const trace = snapshot.device_traces[0]!;
  const blockPool = new Map<number, [number, number]>();
  const segmentPool = new Map<number, [number, number]>();
  const entries = trace.map((e, i): TraceEntry => {
    let pool: [number, number] = [0, 0];
    if (e.action === 'alloc') blockPool.set(e.addr, (pool = allocPool.get(i)!));
    else if (e.action === 'free_requested' || e.action === 'free_completed') pool = blockPool.get(e.addr) ?? pool;
    else if (e.action === 'segment_alloc') {
      // The allocation that made it comes next, into it.
      const next = trace.findIndex((x, j) => j > i && x.action === 'alloc');
      segmentPool.set(e.addr, (pool = allocPool.get(next)!));
    } else if (e.action === 'segment_free') pool = segmentPool.get(e.addr) ?? pool;
    return { ...e, pool_id: pool };
  });
  const segments = snapshot.segments.map(({ segment_pool_id: _pool, ...s }) => s);
  return { ...snapshot, segments, device_traces: [entries] };
}

describe("PyTorch 2.12's pool_id on trace entries", () => {
  const recorded = loadRealTrace('graphs.pickle.gz');
  const want = REAL_MANIFEST.find((t) => t.file === 'graphs.pickle.gz')!.stats_at_end;
  const entries = recorded.device_traces[0]!.filter((e) => e.action !== 'snapshot');
  const sameEvents = (run: ReturnType<typeof replaySnapshot>): boolean =>
    run.result.events.length === entries.length &&
    entries.every((e, i) => run.result.events.size[i] === e.size && (e.action === 'oom' || run.result.events.addr[i] === e.addr));

  test('say each request\'s pool: with them a CUDA graph and MemPool recording replays exactly, without them it does not', () => {
    const v212 = withEntryPoolIds(recorded);
    const bytes = encodeSnapshotFile(v212, 'pickle');
    const read = decodeSnapshotFile(bytes);
    expect(read.device_traces[0]!.filter((e) => e.pool_id && e.pool_id[0] + e.pool_id[1] > 0).length).toBeGreaterThan(10);
    const run = replaySnapshot(read, { addresses: 'recorded' });
    expect(run.stream.pools.length).toBe(3);
    expect(sameEvents(run)).toBe(true);
    for (const key of ['reserved_bytes.all.peak', 'num_device_alloc', 'num_device_free', 'segment.all.current', 'allocated_bytes.all.current']) {
      expect([key, run.result.stats[key]]).toEqual([key, want[key]]);
    }
    // The CLI reads the same file through the trace-row path.
    const file = join(tmp, 'graphs-2.12.pickle');
    writeFileSync(file, bytes);
    const r = cli('replay', file, '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).stats['num_device_free']).toBe(want['num_device_free']);
    // Nothing else said which pool: without the ids every request is the default pools', and the replay parts ways.
    const bare = { ...v212, device_traces: [v212.device_traces[0]!.map(({ pool_id: _p, ...e }) => e)] };
    expect(sameEvents(replaySnapshot(decodeSnapshotFile(encodeSnapshotFile(bare, 'pickle')), { addresses: 'recorded' }))).toBe(false);
  });

  test('under expandable_segments a private pool maps pages too, as alloc_block does outside Meta\'s build', () => {
    // real/graph_expandable (a CUDA graph captured under expandable_segments:True, torch 2.11) maps its
    // capture's pool; the same-config conformance replays it event for event.
    const graph = loadRealTrace('graph_expandable__expandable_segments=True.pickle.gz');
    expect(graph.device_traces[0]!.some((e) => e.action === 'segment_map' && e.stream !== 0)).toBe(true);
    expect(graph.device_traces[0]!.some((e) => e.action === 'segment_alloc')).toBe(false);
    for (const snapshot of [loadRealTrace('compiled__default.pickle.gz'), recorded, graph]) {
      const run = replaySnapshot(snapshot, { conf: 'expandable_segments:True', statsOnly: true });
      const segments = [...run.result.allocator.segments.values()];
      expect(segments.some((g) => g.pool === 0 && g.expandable)).toBe(true);
      const pooled = segments.filter((g) => g.pool !== 0);
      expect(pooled.length).toBeGreaterThan(0);
      expect(pooled.filter((g) => !g.expandable)).toEqual([]);
    }
  });

  test('a pool_id that is no pair of integers is refused, naming the entry', () => {
    const v = small();
    v.device_traces[0][2].pool_id = [1, 'x'];
    expect(refusal(v).message).toMatch(/device_traces\[0\]\[2\]\.pool_id .*a pair of integers/);
  });
});

describe('inconsistent snapshots say what is wrong and where', () => {
  test('a negative size or address is refused, naming the entry', () => {
    const v = small();
    v.device_traces[0][2].size = -4;
    expect(refusal(v).message).toMatch(/device_traces\[0\]\[2\]\.size should be an address or size of 0 or more, got number -4/);
  });

  // tests/fixtures/bad/: real pickles edited by scripts/make-bad-inputs.py, read as PyTorch's files are (the fast path).
  test('a real pickle with an alloc of negative size is refused by the CLI, naming the entry', () => {
    const r = cli('replay', 'tests/fixtures/bad/negative-alloc-size.pickle.gz');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/device_traces\[0\]\[1\]\.size should be an address or size of 0 or more, got number -4096/);
  });

  test('a real pickle with a free of an address no segment ever held: the rest replays, the entry is named in a warning, no "mid-run"', () => {
    const r = cli('replay', 'tests/fixtures/bad/free-never-held.pickle.gz');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^warning: Inconsistent trace: the block at 78187069440 \(freed by trace entry 16\), allocated before the trace began, is left out: no segment holds it/m);
    expect(r.out).not.toMatch(/mid-run/);
  });

  test('a duplicated segment, or overlapping ones, are refused, naming both', () => {
    const v = small();
    v.segments.push(structuredClone(v.segments[0]));
    expect(refusal(v).message).toMatch(/segments\[0\] .* and segments\[1\] .* overlap: the same segment is listed twice/);
  });

  test('a block larger than its segment is refused, naming the segment', () => {
    const v = small();
    v.segments[0].blocks[2].size = 40 * MiB;
    expect(refusal(v).message).toMatch(/the blocks of segments\[0\] .* add up to 50331648 bytes, but the segment is 20971520 bytes/);
  });

  test('a free of an address no segment holds replays the rest and names the entry', () => {
    const v = small();
    v.device_traces[0].push({ action: 'free_requested', addr: 12345, size: 512, stream: 0 }, { action: 'free_completed', addr: 12345, size: 512, stream: 0 });
    const run = replaySnapshot(decodeSnapshotFile(bytesOf(v)));
    expect(run.result.problems.join(' ')).toMatch(/block at 12345 \(freed by trace entry 5\).*no segment holds it/);
    expect(run.notes.join(' ')).toMatch(/Inconsistent trace: .*12345/);
    expect(run.result.stats['allocation.all.current']).toBe(1);
    // Not taken for a trace that began mid-run: no segment ever held it.
    expect(run.notes.join(' ')).not.toMatch(/begins mid-run/);
    const r = cli('replay', write('free-nowhere.json', v));
    expect([r.code, r.out]).toEqual([0, expect.stringMatching(/warning: Inconsistent trace: .*12345/)]);
    expect(r.out).not.toMatch(/mid-run/);
  });

  test('the same allocation twice is named, and the second left out', () => {
    const v = small();
    v.device_traces[0].splice(3, 0, { action: 'alloc', addr: SEG + 4 * MiB, size: 4 * MiB, stream: 0 });
    const run = replaySnapshot(decodeSnapshotFile(bytesOf(v)));
    expect(run.notes.join(' ')).toMatch(/device_traces\[0\]\[3\] allocates 1077936128 again .* left out/);
    expect(run.stream.length).toBe(3);
  });
});

function write(name: string, v: unknown): string {
  const path = join(tmp, name);
  writeFileSync(path, JSON.stringify(v));
  return path;
}

describe('snapshots without history', () => {
  test.each(['segments_only', 'no_history'])('%s: the state at that moment, an explanation, no sweep', (name) => {
    const file = `tests/fixtures/real/${name}.pickle.gz`;
    const run = replaySnapshot(loadRealTrace(`${name}.pickle.gz`));
    expect(run.stream.length).toBe(0);
    expect(run.notes[0]).toBe(NO_HISTORY);
    expect(run.result.stats['reserved_bytes.all.current']).toBeGreaterThan(0);
    expect(run.result.stats['allocated_bytes.all.current']).toBeGreaterThan(0);
    const r = cli('replay', file);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/no allocation history .*_record_memory_history\(max_entries=100000\)/);
    expect(r.out).toMatch(/at the end: reserved - allocated .* largest free block .* external fragmentation/);
    const sweep = cli('sweep', file, '--max-split', '128,none');
    expect(sweep.code).toBe(1);
    expect(sweep.err).toMatch(/no allocation history/);
  });
});

describe('the OOM dump', () => {
  test('the CLI, given no capacity, shows the recorded OOM at its request and the cap it inferred', () => {
    const r = cli('replay', 'tests/fixtures/real/oom__default.pickle.gz', '--json');
    const { stats, ooms } = JSON.parse(r.out);
    expect(stats['num_ooms']).toBe(1);
    expect(ooms[0].request).toBe(10943);
    expect(r.err).toMatch(/cap was between 9\.59 GiB and 10\.07 GiB/);
    expect(r.err).toMatch(/note: 1 request failed with OOM in the recording,/);
    const none = JSON.parse(cli('replay', 'tests/fixtures/real/oom__default.pickle.gz', '--capacity', 'none', '--json').out);
    expect(none.stats['num_ooms']).toBe(0);
  });

  test('the cap is the roundest value in the interval the trace shows', () => {
    expect(roundestIn(10_299_113_472, 10_815_012_863)).toBe(10 * 2 ** 30);
    expect(roundestIn(5_900_000_000, 6_100_000_000)).toBe(6_000_000_000);
    expect(roundestIn(1234, 1234)).toBe(1234);
  });
});
