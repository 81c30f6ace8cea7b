// A cuDNN convolution's workspace that does not fit is an OOM the program survives: PyTorch's cuDNN v8
// path (Conv_v8.cpp's try_configs) catches it and runs the next engine config. A trace recorded with C++
// frames names the workspace (run_conv_plan); both snapshot readers flag it, the request stream keeps
// its id, and a replay counts its OOM as caught, not as the run's.
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, test } from 'vitest';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { writePickle, type PickleWritable } from '../../src/trace/pickle/pickle-writer';
import { coverageOf, oomOutcome } from '../../src/trace/replay/coverage';
import { replay } from '../../src/trace/replay/replay';
import { planSnapshotReplay, replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile, decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { CUDNN_WORKSPACE, traceColumnsFromEntries } from '../../src/trace/snapshot/trace-columns';
import { RequestKind } from '../../src/trace/stream/request-stream';

const MiB = 2 ** 20;
const SEG = 2 ** 40;
const SEG2 = SEG + 32 * MiB;
const python = { name: '_conv_forward', filename: 'torch/nn/modules/conv.py', line: 548 };
// One object for every entry that has it: the pickle refers back to it (the fast path's memo branch).
const runConvPlan = { name: 'at::native::run_conv_plan(cudnnContext*, at::Tensor const&, at::Tensor const&, at::Tensor const&)', filename: '??', line: 0 };
const conv = { name: 'at::native::raw_cudnn_convolution_forward_out(at::Tensor const&)', filename: '??', line: 0 };
const notConv = { name: 'at::native::run_conv_planner_of_something_else()', filename: '??', line: 0 };

/** Entries with every key torch 2.11 writes, in its order, so that the fast path reads them. */
function entry(action: string, addr: number, size: number, frames: unknown[]): Record<string, unknown> {
  return { action, addr, size, stream: 0, time_us: 1_700_000_000_000_000 + addr, compile_context: 'N/A', user_metadata: '', frames };
}

/** An 8 MiB output in a 20 MiB segment, a 13 MiB workspace in a 14 MiB one, allocated and freed; then,
 * under a 34 MiB cap, a 16 MiB workspace and a 16 MiB tensor that both ran out of memory (the first
 * caught, the second not). */
function snapshot(): Record<string, any> {
  const cuda = [runConvPlan, conv, python];
  return {
    segments: [
      { device: 0, address: SEG, total_size: 20 * MiB, allocated_size: 8 * MiB, active_size: 8 * MiB, requested_size: 8 * MiB, stream: 0, segment_type: 'large', segment_pool_id: [0, 0], is_expandable: false, frames: [],
        blocks: [
          { address: SEG, size: 8 * MiB, requested_size: 8 * MiB, state: 'active_allocated', frames: [] },
          { address: SEG + 8 * MiB, size: 12 * MiB, requested_size: 0, state: 'inactive', frames: [] },
        ] },
      { device: 0, address: SEG2, total_size: 14 * MiB, allocated_size: 0, active_size: 0, requested_size: 0, stream: 0, segment_type: 'large', segment_pool_id: [0, 0], is_expandable: false, frames: [],
        blocks: [{ address: SEG2, size: 14 * MiB, requested_size: 0, state: 'inactive', frames: [] }] },
    ],
    device_traces: [
      [
        entry('segment_alloc', SEG, 20 * MiB, [python]),
        entry('alloc', SEG, 8 * MiB, [conv, python]),
        entry('segment_alloc', SEG2, 14 * MiB, cuda),
        entry('alloc', SEG2, 13 * MiB, cuda),
        entry('free_requested', SEG2, 13 * MiB, cuda),
        entry('free_completed', SEG2, 13 * MiB, cuda),
        { action: 'oom', device_free: 0, size: 16 * MiB, stream: 0, time_us: 3, compile_context: 'N/A', user_metadata: '', frames: cuda },
        { action: 'oom', device_free: 0, size: 16 * MiB, stream: 0, time_us: 4, compile_context: 'N/A', user_metadata: '', frames: [notConv, python] },
      ],
    ],
    allocator_settings: { PYTORCH_CUDA_ALLOC_CONF: '', max_split_size: -1 },
  };
}

beforeAll(() => {
  expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
});

describe("a cuDNN workspace's OOM", () => {
  const bytes = writePickle(snapshot() as PickleWritable);

  test('both readers flag the workspace and its OOM by their run_conv_plan frame, and nothing else', () => {
    const generic = traceColumnsFromEntries(decodeSnapshotFile(bytes).device_traces[0]!);
    const fast = decodeSnapshotForReplay(bytes).traces[0]!;
    const flags = (c: typeof fast): number[] => [...c.flags.subarray(0, c.length)].map((f) => f & CUDNN_WORKSPACE);
    expect(flags(fast)).toEqual([0, 0, 0, CUDNN_WORKSPACE, 0, 0, CUDNN_WORKSPACE, 0]);
    expect(flags(generic)).toEqual(flags(fast));
  });

  test("the stream keeps the workspaces' ids; the caught OOM is not one the recording ran out at", () => {
    const { stream } = planSnapshotReplay(decodeSnapshotForReplay(bytes).snapshot, { trace: decodeSnapshotForReplay(bytes).traces[0]! });
    const allocs = [...stream.kind.keys()].filter((i) => stream.kind[i] === RequestKind.alloc);
    expect(allocs.map((i) => stream.cudnnWorkspaces.has(stream.id[i]!))).toEqual([false, true, true, false]);
    expect([...stream.recordedOoms]).toEqual([allocs[3]]);
    expect(stream.notes.join(' ')).toContain("1 OOM of the recording came from cuDNN convolutions' workspaces, which PyTorch catches");
  });

  test('a replay counts it as caught and goes on; the recording replays as it ran', () => {
    const run = replaySnapshot(decodeSnapshotFile(bytes), { addresses: 'recorded', capacity: { kind: 'fraction', bytes: 34 * MiB } });
    expect(run.result.divergences).toEqual([]);
    expect(run.result.caught.map((o) => o.size)).toEqual([16 * MiB]);
    expect(run.result.ooms.map((o) => o.size)).toEqual([16 * MiB]);
    expect(run.result.stats['num_ooms']).toBe(2);
    expect(run.notes.join(' ')).toMatch(/1 cuDNN workspace allocation did not fit \(the first at request \d\)\. PyTorch catches each such OOM/);
  });

  test("a workspace that does not fit a cap is left out: the free that follows frees nothing, the run goes on", () => {
    const { stream } = planSnapshotReplay(decodeSnapshotForReplay(bytes).snapshot, { trace: decodeSnapshotForReplay(bytes).traces[0]! });
    // Under 24 MiB the 13 MiB workspace fits nowhere beside the 8 MiB output's segment; the last two allocs do not either.
    const r = replay(stream, { config: parseAllocConf('').config, addresses: 'simulated', capacity: { kind: 'fraction', bytes: 24 * MiB } });
    expect(r.caught.map((o) => o.request)).toEqual([1, 3]);
    expect(r.ooms.map((o) => o.request)).toEqual([5]);
    expect(r.stats['allocated_bytes.all.current']).toBe(8 * MiB);
    // Without a cap only the recorded OOMs' own requests could fail, and they fit: no OOM of either kind.
    const free = replay(stream, { config: parseAllocConf('').config, addresses: 'simulated' });
    expect([free.caught.length, free.ooms.length]).toEqual([0, 0]);
  });

  test("a dump an out-of-memory observer took at a caught OOM still ends there: no verdict reaches past it", () => {
    const dump = snapshot();
    dump.device_traces[0] = dump.device_traces[0].slice(0, -1); // the caught OOM last
    const { stream } = planSnapshotReplay(decodeSnapshotFile(writePickle(dump as PickleWritable)));
    expect(stream.recordedOoms).toHaveLength(0);
    const c = coverageOf(stream);
    expect(c.endsAtOom).toBe(stream.length - 2);
    expect(oomOutcome(null, c)).toBe(`no OOM through request ${stream.length - 1}, where the recording ends`);
  });

  test('the real run that survived 41 of them (resnet50 at 45 under a 2.28 GiB cap) replays with them caught, in the CLI too', () => {
    const r = spawnSync(process.execPath, ['bin/splitscope.mjs', 'replay', 'tests/fixtures/sizes/resnet-45__default__cap2.28GiB.pickle.gz', '--capacity', '2446327808', '--json'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect([out.ooms.length, out.caught_ooms.length, out.stats['num_ooms']]).toEqual([0, 41, 41]);
    expect(r.stderr).toContain('41 OOMs of the recording came from cuDNN convolutions\' workspaces, which PyTorch catches');
  });

  test("a prediction counts its cuDNN workspaces: the part of it its recordings cannot tell", () => {
    const sizes = 'tests/fixtures/sizes';
    const r = spawnSync(process.execPath, ['bin/splitscope.mjs', 'predict', `16:${sizes}/resnet-16__default.pickle.gz`, `32:${sizes}/resnet-32__default.pickle.gz`, '--at', '45', '--json'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    // The skeleton, the run at 32, makes 321 (its C++ frames name them).
    expect(JSON.parse(r.stdout).prediction.cudnn_workspaces).toBe(321);
    expect(r.stderr).not.toContain('Python frames alone');
  });
});
