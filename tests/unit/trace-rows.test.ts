// decodeSnapshotForReplay reads trace entries straight into columns (pickle-trace-rows.ts): it must
// give the same traces as decodeSnapshotFile, and accept and refuse the same files with the same messages.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../src/lib/import-error';
import { readPickle } from '../../src/trace/pickle/pickle-reader';
import { TraceRows } from '../../src/trace/snapshot/trace-rows';
import { writePickle, type PickleWritable } from '../../src/trace/pickle/pickle-writer';
import { decodeSnapshotFile, decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { traceColumnsFromEntries, type TraceColumns } from '../../src/trace/snapshot/trace-columns';
import { encodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { replay } from '../../src/trace/replay/replay';
import { exportSnapshot } from '../../src/trace/replay/snapshot-export';

const FIXTURES = join(__dirname, '../fixtures');
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));

function plain(c: TraceColumns): number[][] {
  return [...Array(c.length).keys()].map((i) => [c.action[i]!, c.addr[i]!, c.size[i]!, c.stream[i]!, c.flags[i]!]);
}

/** What both decoders make of `bytes`: the traces as columns, or the error. */
function both(bytes: Uint8Array): [unknown, unknown] {
  const outcome = (fn: () => { traces: TraceColumns[]; rest: unknown }): unknown => {
    try {
      const { traces, rest } = fn();
      return { traces: traces.map(plain), rest };
    } catch (e) {
      if (e instanceof ImportError) return { code: e.code, message: e.message };
      throw e;
    }
  };
  return [
    outcome(() => {
      const s = decodeSnapshotFile(bytes);
      return { traces: s.device_traces.map((t) => traceColumnsFromEntries(t)), rest: [s.segments, s.allocator_settings] };
    }),
    outcome(() => {
      const { snapshot: s, traces } = decodeSnapshotForReplay(bytes);
      return { traces, rest: [s.segments, s.allocator_settings] };
    }),
  ];
}

/** Entries with every key torch 2.11 writes, in its order, so that the fast path reads them. */
function entry(action: string, addr: number, size: number, frames: unknown[] = []): Record<string, unknown> {
  return { action, addr, size, stream: 0, time_us: 1_700_000_000_000_000 + addr, compile_context: 'N/A', user_metadata: '', frames };
}

function snapshot(): Record<string, any> {
  const frame = { name: 'forward', filename: 'model.py', line: 12 };
  return {
    segments: [],
    device_traces: [
      [
        entry('segment_alloc', 2 ** 40, 2097152, []),
        entry('alloc', 2 ** 40, 512, [frame, { name: 'step', filename: 'train.py', line: 7 }]),
        entry('free_requested', 2 ** 40, 512, [frame]),
        entry('free_completed', 2 ** 40, 512, [frame]),
        { action: 'oom', device_free: 1024, size: 2 ** 36, stream: 0, time_us: 3 },
      ],
      [entry('alloc', 2 ** 41, 1 << 20)],
    ],
    allocator_settings: { PYTORCH_CUDA_ALLOC_CONF: '', max_split_size: -1 },
  };
}

describe('decodeSnapshotForReplay', () => {
  for (const name of ['train_gpt2-n12__default.pickle.gz', 'transformer-s1__roundup_power2_divisions=4.pickle.gz']) {
    it(`gives the traces decodeSnapshotFile gives: ${name}`, () => {
      const [generic, fast] = both(fixture(name));
      expect(fast).toEqual(generic);
      // And the fast path did the reading.
      const rows = new TraceRows(1 << 20);
      readPickle(gunzipSync(fixture(name)), { fastPath: rows });
      expect(rows.columns.length).toBeGreaterThan(30_000);
    });
  }

  // With details (the page's reading): each entry's time and stack frames as decodeSnapshotFile gives them.
  for (const name of ['train_gpt2-n12__default.pickle.gz', 'real/compiled__default.pickle.gz', 'real/phases.pickle.gz']) {
    it(`keeps the times and frames decodeSnapshotFile gives, with details: ${name}`, () => {
      const whole = decodeSnapshotFile(fixture(name));
      const { snapshot, traces } = decodeSnapshotForReplay(fixture(name), { details: true });
      const entries = whole.device_traces[0]!;
      const d = traces[0]!.details!;
      expect(traces[0]!.length).toBe(entries.length);
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        const frames = d.frames[i]! >= 0 ? d.frameLists[d.frames[i]!] : undefined;
        expect([i, d.time[i], frames]).toEqual([i, e.time_us, e.frames]);
      }
      // Shared lists stay shared: far fewer lists than entries.
      expect(d.frameLists.length).toBeLessThan(entries.length / 4);
      expect(snapshot.notes).toEqual(whole.notes); // 'line unknown' frames counted too
      // The fast path did the reading.
      const rows = new TraceRows(1 << 20, true);
      readPickle(gunzipSync(fixture(name)), { fastPath: rows });
      expect(rows.columns.length).toBeGreaterThan(entries.length / 2);
    });
  }

  it('reads entries of several devices, oom entries and frames', () => {
    const bytes = writePickle(snapshot() as PickleWritable);
    const [generic, fast] = both(bytes);
    expect(fast).toEqual(generic);
    expect((fast as { traces: number[][][] }).traces.map((t) => t.length)).toEqual([5, 1]);
    const rows = new TraceRows(bytes.length);
    readPickle(bytes, { fastPath: rows });
    expect(rows.columns.length).toBe(5); // all but the oom entry
  });

  it("reads a real OOM dump's oom entries as rows too (device_free where addr is), so its trace is one run", () => {
    const name = 'real/oom__default.pickle.gz';
    const whole = decodeSnapshotFile(fixture(name)).device_traces[0]!;
    expect(whole.some((e) => e.action === 'oom')).toBe(true);
    const [generic, fast] = both(fixture(name));
    expect(fast).toEqual(generic);
    const rows = new TraceRows(1 << 20);
    readPickle(gunzipSync(fixture(name)), { fastPath: rows });
    expect(rows.columns.length).toBe(whole.length);
    expect(rows.runs).toHaveLength(1);
  });

  it('falls back to the generic reading when an entry is used twice', () => {
    const s = snapshot();
    s.device_traces[1].push(s.device_traces[0][1]); // the pickle refers back to the same dict
    s.external_annotations = [s.device_traces[0][2]];
    const [generic, fast] = both(writePickle(s as PickleWritable));
    expect(fast).toEqual(generic);
    expect((fast as { traces: number[][][] }).traces[1]).toHaveLength(2);
  });

  const broken: [string, (m: Record<string, any>) => void][] = [
    ['an address of the wrong type', (m) => (m.device_traces[0][1].addr = '0x40000000')],
    ['a fractional size', (m) => (m.device_traces[0][0].size = 1.5)],
    ['an unknown action', (m) => (m.device_traces[0][0].action = 'teleport')],
    ['an address beyond 2^53', (m) => (m.device_traces[0][1].addr = 2n ** 64n - 4096n)],
    ['a time beyond 2^53', (m) => (m.device_traces[0][1].time_us = 2n ** 70n)],
    ['a frame without a line', (m) => delete m.device_traces[0][1].frames[1].line],
    ['a frame that is a string', (m) => (m.device_traces[0][2].frames = ['forward'])],
    ['a compile context that is a number', (m) => (m.device_traces[0][3].compile_context = 4)],
    ['a trace that is not a list', (m) => (m.device_traces[1] = {})],
  ];
  for (const [what, breakIt] of broken) {
    it(`accepts or refuses, with the same message, ${what}`, () => {
      const m = snapshot();
      breakIt(m);
      const [generic, fast] = both(writePickle(m as PickleWritable));
      expect(fast).toEqual(generic);
    });
  }

  it('reports every cut-off prefix of a pickle as decodeSnapshotFile does', () => {
    const bytes = writePickle(snapshot() as PickleWritable);
    for (let n = 0; n < bytes.length; n++) {
      const [generic, fast] = both(bytes.subarray(0, n));
      expect(fast).toEqual(generic);
    }
  });
});

describe('a run splitscope exports', () => {
  it("reads back through the fast path, as torch's own files do, with what the program attached kept", () => {
    const source = fixture('job/annotated.pickle.gz');
    const { snapshot, traces } = decodeSnapshotForReplay(source, { details: true });
    const { stream, replayOptions } = planSnapshotReplay(snapshot, { trace: traces[0]! });
    const run = replay(stream, { ...replayOptions, keepEvents: true });
    const bytes = encodeSnapshotFile(exportSnapshot(run, stream, { config: replayOptions.config, sourceDetails: traces[0]!.details! }), 'pickle');
    // Every entry a row: none left to the generic reader (before, each was, at twice the time).
    const rows = new TraceRows(bytes.length, true);
    readPickle(bytes, { fastPath: rows });
    expect(rows.columns.length).toBe(run.events.length);
    // user_metadata carried from the source entries to the run's (the phases the program named).
    const named = [...traces[0]!.details!.context.values()].filter((c) => c.user_metadata).length;
    expect(named).toBeGreaterThan(0);
    expect([...rows.columns.details!.context.values()].filter((c) => c.user_metadata).length).toBeGreaterThan(0);
    const [generic, fast] = both(bytes);
    expect(fast).toEqual(generic);
  });
});
