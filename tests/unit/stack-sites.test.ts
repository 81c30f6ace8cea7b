// An allocation's site is the program's line, or the op that asked, whichever way it was recorded: on
// a recording with C++ frames (the recorder's default) the unwinder's, the caching allocator's, the
// dispatcher's and the interpreter's frames are folded, and where the stack has Python frames the
// innermost of them is the site, as on the same program recorded with stacks='python'.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { allocationStacks } from '../../src/trace/measures/allocation-stacks';
import { functionName } from '../../src/trace/measures/frame-filter';
import { stackPath, stackSite } from '../../src/trace/measures/memory-by-stack';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';

/** Bytes allocated per site, and the labels of every stack's path, of one recording. */
function sitesOf(file: string) {
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(`tests/fixtures/frameworks/${file}`), { gunzip: nodeGunzip, details: true });
  const { stream } = planSnapshotReplay(snapshot, { trace: traces[0]! });
  const stacks = allocationStacks(stream, traces[0]!.details, snapshot);
  const bytes = new Map<string, number>();
  const labels = new Set<string>();
  for (let i = 0; i < stream.length; i++) {
    if (stream.kind[i] !== RequestKind.alloc) continue;
    const stack = stacks.stackOf(stream.id[i]!);
    const site = stackSite(stack);
    bytes.set(site, (bytes.get(site) ?? 0) + stream.size[i]!);
    for (const l of stackPath(stack)) labels.add(l);
  }
  return { bytes, labels };
}

const pythonLines = (m: Map<string, number>) => new Map([...m].filter(([site]) => site.includes('.py:')));

describe.each(['trainer-4', 'lightning-8', 'peft-2', 'convnet-16', 'segnet-192', 'sgd-512'])('%s', (run) => {
  test('the same Python sites, to the byte, recorded either way; the C++ recording names ops where there is no Python', () => {
    const cpp = sitesOf(`${run}__default.pickle.gz`);
    const python = sitesOf(`${run}__python.pickle.gz`);
    expect(pythonLines(cpp.bytes)).toEqual(pythonLines(python.bytes));
    expect(pythonLines(cpp.bytes).size).toBeGreaterThan(5);
    // No allocator, unwinder or interpreter frame is a site, nor anywhere in a path shown.
    const noise = /CachingAllocator|unwind::unwind|CapturedTraceback|gather_with_cpp|^_?Py[A-Z_]|^__libc_|c10::impl::|::redispatch/;
    expect([...cpp.bytes.keys()].filter((s) => noise.test(s))).toEqual([]);
    expect([...cpp.labels].filter((l) => noise.test(l))).toEqual([]);
    // The backward pass's allocations, which have no Python frame, are an op's or an autograd node's.
    expect([...cpp.bytes.keys()].filter((s) => /^(at|torch)::/.test(s)).length).toBeGreaterThan(2);
  });
});

test('a C++ frame reads as its function: no return type, template arguments or parameters', () => {
  expect(functionName('void at::native::gpu_reduce_kernel<float, float, 4, 4, at::native::func_wrapper_t<float, Op> >(at::TensorIterator&, Op const&, Ident)')).toBe('at::native::gpu_reduce_kernel');
  expect(functionName('at::(anonymous namespace)::(anonymous namespace)::wrapper_CUDA_nll_loss_backward(at::Tensor const&)')).toBe(
    'at::(anonymous namespace)::(anonymous namespace)::wrapper_CUDA_nll_loss_backward',
  );
  expect(functionName('forward')).toBe('forward');
  expect(functionName('<module>')).toBe('<module>');
});
