// Gradients kept across micro-batches are gradients (issue 48, item 3): the out-of-memory program's Llama
// with its batch in one piece and in two micro-batches whose gradients accumulate to the optimizer step
// (tests/fixtures/microbatch, recorded on the device both with stacks='python' and with the recorder's
// defaults). Between the micro-batches the gradients the first backward made are alive and are counted as
// gradients, not as input data; the input is one micro-batch's token ids; both recording modes agree to
// the byte.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { bytesByCategoryAt, categorize, Category } from '../../src/trace/categories/categories';
import { Phase } from '../../src/trace/categories/frame-phase';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';

const DIR = 'tests/fixtures/microbatch';

interface Run {
  file: string;
  size: number;
  mode: 'python' | 'default';
  truth: { marker: number; parameter: number; gradient: number; optimizer_state: number }[];
}
const RUNS: Run[] = JSON.parse(readFileSync(`${DIR}/MANIFEST.json`, 'utf8')).traces;

/** By category, requested bytes live before each step's first forward and before each later forward of it
 * (between micro-batches), and at each optimizer step's marker. */
function figures(run: Run) {
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(`${DIR}/${run.file}`), { gunzip: nodeGunzip, details: true });
  const { stream } = planSnapshotReplay(snapshot, { trace: traces[0]! });
  const categories = categorize(stream, traces[0]!.details);
  const markers = run.truth.map((t) => {
    for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && stream.size[i] === t.marker) return i;
    throw new Error(`no marker ${t.marker}`);
  });
  const { kinds, first } = categories.phases;
  // The forwards that follow a backward with no optimizer step between: the second micro-batch's and on.
  const between = kinds.flatMap((kind, k) => (kind === Phase.forward && kinds[k - 1] === Phase.backward ? [first[k]! - 1] : []));
  return {
    between: bytesByCategoryAt(stream, categories, between),
    atSteps: bytesByCategoryAt(stream, categories, markers.map((m) => m - 1)),
  };
}

const within = (got: number, want: number): boolean => Math.abs(got - want) <= 0.02 * want;

describe.each(RUNS.map((r) => [`${r.size} micro-batch${r.size > 1 ? 'es' : ''}, ${r.mode} mode`, r] as const))('%s', (_, run) => {
  const { between, atSteps } = figures(run);
  const oneInput = (8 / run.size) * 512 * 8;

  test('at each optimizer step: gradients and optimizer state within 2% of what the program read', () => {
    run.truth.forEach((t, k) => {
      expect([within(atSteps[k]![Category.gradient]!, t.gradient), within(atSteps[k]![Category.optimizerState]!, t.optimizer_state)]).toEqual([true, true]);
    });
  });

  test("between micro-batches: the first backward's gradients, kept to the step, are gradients; the input is one micro-batch's", () => {
    // One such moment per optimizer step where the batch is split, none where it is not.
    expect(between.length).toBe(run.size === 1 ? 0 : run.truth.length * (run.size - 1));
    for (const at of between) {
      expect(within(at[Category.gradient]!, run.truth[0]!.gradient)).toBe(true);
      expect(at[Category.input]!).toBeLessThanOrEqual(oneInput);
    }
  });
});

test('both recording modes give the same categories, to the byte, at every moment measured', () => {
  for (const size of [1, 2]) {
    const [python, cpp] = (['python', 'default'] as const).map((mode) => figures(RUNS.find((r) => r.size === size && r.mode === mode)!));
    expect(cpp).toEqual(python);
  }
});
