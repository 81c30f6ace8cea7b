// What the memory is, on real training programs whose parameter counts the libraries fix: torchvision's
// resnet50 (25,557,032 parameters, SGD with momentum), timm's vit_base_patch16_224 (86,567,656, AdamW)
// and the job's small Llama (2 layers, d=512, vocabulary 8,000: 14,092,800, AdamW). At the end of each
// optimizer step, before zero_grad: parameters (and buffers), gradients and optimizer state within 2%
// of the truth; the steps found; no leak in a program without one.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { bytesByCategoryAt, categorize, Category, CATEGORY_COUNT, categorySentence, categoryTotals, stackedCategorySeries } from '../../src/trace/categories/categories';
import { Phase, phaseOfFrames, phaseOfMetadata } from '../../src/trace/categories/frame-phase';
import { suspectedLeaks } from '../../src/trace/categories/leaks';
import { stepStarts, steps } from '../../src/trace/categories/steps';
import { allocationStacks } from '../../src/trace/measures/allocation-stacks';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';

function load(file: string) {
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(file), { gunzip: nodeGunzip, details: true });
  const { stream } = planSnapshotReplay(snapshot, { trace: traces[0]! });
  const details = traces[0]!.details!;
  return { snapshot, stream, details, categories: categorize(stream, details) };
}

const PROGRAMS = [
  { file: 'tests/fixtures/real/resnet__default.pickle.gz', parameters: 25_557_032, stateCopies: 1, optimizerSteps: 1 },
  { file: 'tests/fixtures/real/vit_oom__default.pickle.gz', parameters: 86_567_656, stateCopies: 2, optimizerSteps: 7 },
  { file: 'tests/fixtures/job/rank_1.pickle.gz', parameters: 14_092_800, stateCopies: 2, optimizerSteps: 4 },
  // The same program with user_metadata naming each phase ("step 2 optimizer"): the same answer.
  { file: 'tests/fixtures/job/annotated.pickle.gz', parameters: 14_092_800, stateCopies: 2, optimizerSteps: 4 },
];

describe('categories at the end of each optimizer step', () => {
  test.each(PROGRAMS)('$file', ({ file, parameters, stateCopies, optimizerSteps }) => {
    const { stream, categories } = load(file);
    const { kinds, lastOwn } = categories.phases;
    // SGD's in-place steps after the first allocate nothing: only steps that allocated are seen.
    const ends = kinds.flatMap((k, i) => (k === Phase.optimizer ? [lastOwn[i]!] : []));
    expect(ends.length).toBeGreaterThanOrEqual(optimizerSteps);
    const bytes = 4 * parameters; // fp32
    const near = (got: number, want: number) => expect(Math.abs(got / want - 1)).toBeLessThan(0.02);
    for (const at of bytesByCategoryAt(stream, categories, ends)) {
      near(at[Category.parameter]!, bytes);
      near(at[Category.gradient]!, bytes);
      near(at[Category.optimizerState]!, stateCopies * bytes);
      // Of the forward, only the loss and the like are still alive (`del loss` comes after the step).
      expect(at[Category.activation]).toBeLessThan(bytes / 1000);
    }
  });
});

test('the OOM dump at its peak: mostly activations, said in one sentence', () => {
  const { stream, categories } = load('tests/fixtures/real/vit_oom__default.pickle.gz');
  const totals = categoryTotals(stream, categories);
  expect(totals.peakRequest).toBeGreaterThan(stream.length - 5);
  expect(categorySentence(totals.atPeak)).toMatch(/^8\d% activations, 1\d% optimizer state, \d% parameters/);
});

test("the timeline's stacked rows: a point a request where they fit, else each point the largest of its requests, the rows nested", () => {
  const { stream, categories } = load('tests/fixtures/real/vit_oom__default.pickle.gz');
  const n = stream.length;
  const full = stackedCategorySeries(stream, categories, new Set(), Infinity);
  expect([full.points, full.requests]).toEqual([n, n]);
  // The top row is all the live requested bytes: after the last request, categoryTotals' end.
  const end = categoryTotals(stream, categories).atEnd.reduce((a, b) => a + b, 0);
  expect(full.stacked[(CATEGORY_COUNT - 1) * n + n - 1]).toBeCloseTo(end, -3);
  const points = 1000;
  const few = stackedCategorySeries(stream, categories, new Set(), points);
  expect([few.points, few.requests, few.stacked.length]).toEqual([points, n, CATEGORY_COUNT * points]);
  for (let c = 0; c < CATEGORY_COUNT; c++) {
    for (let k = 0; k < points; k++) {
      const from = Math.floor((k * n) / points);
      const to = Math.floor(((k + 1) * n) / points);
      expect(to).toBeGreaterThan(from);
      let max = -Infinity;
      for (let i = from; i < to; i++) max = Math.max(max, full.stacked[c * n + i]!);
      expect(few.stacked[c * points + k]).toBe(max);
      if (c > 0) expect(few.stacked[c * points + k]).toBeGreaterThanOrEqual(few.stacked[(c - 1) * points + k]!);
    }
  }
});

test('steps: one per forward pass of a training loop, each with its peak; no leak where there is none', () => {
  const vit = load('tests/fixtures/real/vit_oom__default.pickle.gz');
  const found = steps(vit.stream, vit.categories, stepStarts(vit.categories));
  expect(found.length).toBe(8); // 7 whole steps, then the forward that ran out of memory
  // The batch grows each step: so does each step's peak.
  for (let k = 1; k < found.length; k++) expect(found[k]!.peak).toBeGreaterThan(found[k - 1]!.peak);
  // Between steps: the parameters, the optimizer state (after the first step), nothing of the forward.
  expect(found[2]!.atStart[Category.optimizerState]).toBeGreaterThan(0);
  for (const f of ['tests/fixtures/real/vit_oom__default.pickle.gz', 'tests/fixtures/real/resnet__default.pickle.gz', 'tests/fixtures/real/llama__default.pickle.gz', 'tests/fixtures/real/ring__default.pickle.gz']) {
    const { snapshot, stream, details, categories } = load(f);
    expect([f, suspectedLeaks(stream, categories, allocationStacks(stream, details, snapshot), stepStarts(categories))]).toEqual([f, []]);
  }
});

// The same programs recorded with stacks='python' (tests/fixtures/categories) and with the recorder's
// default, stacks='all' (tests/fixtures/sizes), at the same size: the same allocations, so the same
// categories to the byte (but "other", which holds the first recordings' step markers).
test.each([
  ['categories/resnet', 'sizes/resnet-32__default'],
  ['categories/llama', 'sizes/llama-batch-4__default'],
  ['categories/vit', 'sizes/vit-16__default'],
])('%s and %s: the same categories from either recording mode', (python, all) => {
  const max = (file: string) => {
    const { stream, categories } = load(`tests/fixtures/${file}.pickle.gz`);
    return Array.from(categoryTotals(stream, categories).max).slice(0, Category.other);
  };
  const both = max(all);
  expect(both[Category.gradient]).toBeGreaterThan(0);
  expect(both).toEqual(max(python));
});

test('phases from frames and from user_metadata', () => {
  const frame = (filename: string, name: string) => ({ filename, name, line: 1 });
  expect(phaseOfFrames([])).toBe(Phase.none);
  expect(phaseOfFrames([frame('/x/torch/optim/adam.py', '_multi_tensor_adam'), frame('/x/train.py', 'main')])).toBe(Phase.optimizer);
  expect(phaseOfFrames([frame('/x/torch/optim/optimizer.py', 'zero_grad')])).toBe(Phase.zeroGrad);
  expect(phaseOfFrames([frame('/x/torch/nn/modules/linear.py', 'forward'), frame('/x/torch/nn/modules/module.py', '_call_impl')])).toBe(Phase.forward);
  expect(phaseOfFrames([frame('/x/torch/nn/modules/module.py', '_apply'), frame('/x/torch/nn/modules/module.py', 'cuda')])).toBe(Phase.init);
  expect(phaseOfFrames([frame('/x/torch/utils/checkpoint.py', 'unpack_hook'), frame('/x/torch/nn/modules/module.py', '_call_impl')])).toBe(Phase.backward);
  expect(phaseOfFrames([frame('/x/train.py', 'main')])).toBe(Phase.user);
  // The autograd engine's thread in a custom Function's backward, nothing of the program under it; the
  // same Function called from a forward is the forward's.
  expect(phaseOfFrames([frame('/x/torch/autograd/function.py', 'apply')])).toBe(Phase.backward);
  expect(phaseOfFrames([frame('/x/torch/autograd/function.py', 'apply'), frame('/x/torch/nn/modules/module.py', '_call_impl'), frame('/x/train.py', 'main')])).toBe(Phase.forward);
  // The innermost phase: a forward inside optimizer.step(closure) (Lightning) is a forward, the optimizer's
  // own update an optimizer step; backward wins wherever it is (a checkpoint's recomputation).
  const closure = [frame('/x/lightning/pytorch/loops/optimization/automatic.py', 'closure'), frame('/x/torch/optim/optimizer.py', 'wrapper'), frame('/x/train.py', 'main')];
  expect(phaseOfFrames([frame('/x/torch/nn/modules/module.py', '_call_impl'), ...closure])).toBe(Phase.forward);
  expect(phaseOfFrames([frame('/x/torch/_tensor.py', 'backward'), ...closure])).toBe(Phase.backward);
  expect(phaseOfFrames([frame('/x/torch/optim/adamw.py', '_single_tensor_adamw'), frame('/x/torch/optim/adamw.py', 'step'), ...closure.slice(1)])).toBe(Phase.optimizer);
  expect(phaseOfFrames([frame('/x/torch/nn/modules/module.py', '_call_impl'), frame('/x/torch/utils/checkpoint.py', 'recompute_fn'), frame('/x/torch/autograd/graph.py', '_engine_run_backward')])).toBe(Phase.backward);
  // C++ frames (stacks='all', the recorder's default): the autograd engine's device thread, no Python
  // frame, is backward; a compiled graph's backward called from it, its outermost Python frame Function.apply.
  const cpp = (name: string) => frame('', name);
  const engine = [cpp('torch::autograd::Node::operator()(std::vector<at::Tensor> &&)'), cpp('torch::autograd::Engine::evaluate_function(...)'), cpp('torch::autograd::Engine::thread_main(...)'), cpp('__clone')];
  expect(phaseOfFrames([cpp('c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(...)'), cpp('at::_ops::nll_loss_backward::call(...)'), ...engine])).toBe(Phase.backward);
  expect(phaseOfFrames([frame('/tmp/torchinductor_root/ab/cab.py', 'call'), frame('/x/torch/autograd/function.py', 'apply'), cpp('_PyEval_EvalFrameDefault'), cpp('__clone')])).toBe(Phase.backward);
  expect(phaseOfFrames([cpp('at::native::empty_cuda(...)'), frame('/x/torch/nn/modules/module.py', '_call_impl'), frame('/x/train.py', 'main'), cpp('Py_RunMain'), cpp('__libc_start_main')])).toBe(Phase.forward);
  expect(phaseOfMetadata('step 3 backward')).toBe(Phase.backward);
  expect(phaseOfMetadata('step 3 optimizer')).toBe(Phase.optimizer);
  expect(phaseOfMetadata('eval')).toBeNull();
});

test("steps where the program marked them: the profiler's ProfilerStep ranges, else user_metadata that counts steps", () => {
  const { categories } = load('tests/fixtures/job/rank_1.pickle.gz');
  const range = (label: string, start: number) => ({ kind: 'range' as const, label, start, end: start + 5 });
  const meta = (label: string, start: number) => ({ kind: 'metadata' as const, label, start, end: start + 5 });
  expect(stepStarts(categories, [range('ProfilerStep#0', 10), range('forward', 12), range('ProfilerStep#1', 40)])).toEqual([10, 40]);
  expect(stepStarts(categories, [meta('step 0 forward', 3), meta('step 0 backward', 9), meta('step 1 forward', 30), meta('eval', 50), meta('step 2 forward', 60)])).toEqual([3, 30, 60]);
  // One mark is not a series of steps: the forward passes then.
  expect(stepStarts(categories, [range('ProfilerStep#0', 10)])).toEqual(stepStarts(categories));
});
