// What the memory is, judged on programs the rules were not written for (tests/fixtures/frameworks,
// recorded on the device by scripts/device/record-frameworks.py): transformers.Trainer, a Lightning
// module with gradient accumulation (its forward and backward run inside optimizer.step(closure)), PEFT
// LoRA on a frozen Llama, a torch.compile'd loop, resnet18 under fp16 autocast with GradScaler, a
// segmentation network, and a plain MLP with SGD momentum; six sizes each, each recorded both ways (the
// recorder's defaults, with C++ frames, and stacks='python'). After every optimizer step the program read
// its parameters', gradients' and optimizer state's bytes and marked the moment in the trace.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { bytesByCategoryAt, categorize, Category, categoryTotals } from '../../src/trace/categories/categories';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';

const DIR = 'tests/fixtures/frameworks';
interface Truth {
  step: number;
  marker: number;
  parameter: number;
  trainable: number;
  buffer: number;
  gradient: number;
  optimizer_state: number;
}
interface Run {
  file: string;
  program: string;
  size: number;
  mode: 'python' | 'default';
  truth: Truth[];
}
const RUNS: Run[] = JSON.parse(readFileSync(`${DIR}/MANIFEST.json`, 'utf8')).traces.filter((t: Run & { cap?: number | null }) => t.truth && !t.cap);
const PROGRAMS = ['trainer', 'lightning', 'peft', 'compiled', 'convnet', 'segnet', 'sgd'];

function load(file: string) {
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(`${DIR}/${file}`), { gunzip: nodeGunzip, details: true });
  const { stream } = planSnapshotReplay(snapshot, { trace: traces[0]! });
  return { stream, categories: categorize(stream, traces[0]!.details!) };
}

test('seven programs, six sizes each, both recording modes', () => {
  for (const p of PROGRAMS) {
    for (const mode of ['python', 'default']) expect([p, mode, RUNS.filter((r) => r.program === p && r.mode === mode).length]).toEqual([p, mode, 6]);
  }
  // PEFT's base is frozen: few of its parameters get a gradient.
  const peft = RUNS.find((r) => r.program === 'peft')!.truth[0]!;
  expect(peft.trainable / peft.parameter).toBeLessThan(0.01);
});

describe('parameters, gradients and optimizer state within 2% of what the program held, after every optimizer step', () => {
  test.each(RUNS.map((r) => [r.file, r] as const))('%s', (_, run) => {
    const { stream, categories } = load(run.file);
    const at = run.truth.map((t) => {
      for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && stream.size[i] === t.marker) return i;
      throw new Error(`no marker for step ${t.step}`);
    });
    const near = (got: number, want: number): boolean => (want === 0 ? got === 0 : Math.abs(got / want - 1) <= 0.02);
    bytesByCategoryAt(stream, categories, at).forEach((b, k) => {
      const t = run.truth[k]!;
      const got = { parameter: b[Category.parameter]!, gradient: b[Category.gradient]!, optimizer_state: b[Category.optimizerState]! };
      expect({ step: t.step, got, parameter: near(got.parameter, t.parameter + t.buffer), gradient: near(got.gradient, t.gradient), optimizer_state: near(got.optimizer_state, t.optimizer_state) }).toMatchObject({
        parameter: true,
        gradient: true,
        optimizer_state: true,
      });
    });
    // Over the whole run: no forward counted as optimizer state (Lightning's closure), activations found.
    const { max } = categoryTotals(stream, categories);
    const state = Math.max(...run.truth.map((t) => t.optimizer_state));
    expect(max[Category.optimizerState]! / state).toBeLessThanOrEqual(1.02);
    expect(max[Category.activation]!).toBeGreaterThan(0);
  });
});

// The same program at the same size recorded both ways: the same categories (to the byte where the
// allocations are the same; torch.compile's own allocations differ a little from run to run).
test.each(PROGRAMS.flatMap((p) => RUNS.filter((r) => r.program === p && r.mode === 'python').map((r) => [p, r.size] as const)))('%s at %i: the same categories from either recording mode', (program, size) => {
  const of = (mode: string) => {
    const run = RUNS.find((r) => r.program === program && r.size === size && r.mode === mode)!;
    const { stream, categories } = load(run.file);
    return { requests: stream.length, max: Array.from(categoryTotals(stream, categories).max) };
  };
  const [py, all] = [of('python'), of('default')];
  const kinds = [Category.parameter, Category.gradient, Category.optimizerState];
  if (py.requests === all.requests && program !== 'compiled') expect(kinds.map((c) => all.max[c])).toEqual(kinds.map((c) => py.max[c]));
  else for (const c of kinds) expect(Math.abs(all.max[c]! / py.max[c]! - 1)).toBeLessThanOrEqual(0.02);
});
