// What the memory is, against what the programs themselves knew (tests/fixtures/categories, recorded on
// the device by scripts/device/record-categories.py): a transformers Llama and timm's ViT-B with AdamW,
// torchvision's resnet50 with SGD and momentum, each plain, with gradient checkpointing and with
// gradient accumulation, and a small MLP with Adam that leaks one tensor a step, the same without the
// leak, and one whose cache fills over three steps and settles. After each optimizer step the program
// read its parameters', buffers', gradients' and optimizer state's bytes from the model and the
// optimizer, what it kept itself (the leak's list, the cache) and the step's max_memory_allocated(), and
// marked the moment with an allocation of a size no program makes; it also wrote one micro-batch's input
// bytes, and after the last step the bytes of cuBLAS's workspaces (what clearing them freed).
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { bytesByCategoryAt, categorize, Category, CATEGORY_COUNT, type Categories } from '../../src/trace/categories/categories';
import { suspectedLeaks } from '../../src/trace/categories/leaks';
import { stepStarts } from '../../src/trace/categories/steps';
import { allocationStacks } from '../../src/trace/measures/allocation-stacks';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind, type RequestStream } from '../../src/trace/stream/request-stream';

const DIR = 'tests/fixtures/categories';

interface Truth {
  step: number;
  marker: number;
  parameter: number;
  buffer: number;
  gradient: number;
  optimizer_state: number;
  max_allocated: number;
  /** Bytes the program keeps itself (a leak's list, a cache). */
  held: number;
}
interface Run {
  file: string;
  run: string;
  truth: Truth[];
  leak_bytes_per_step?: number;
  /** One micro-batch's input bytes. */
  input: number;
  /** cuBLAS's workspaces, read after the last step. */
  workspace: number;
}
const RUNS: Run[] = JSON.parse(readFileSync(`${DIR}/MANIFEST.json`, 'utf8')).traces;

function load(file: string) {
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(`${DIR}/${file}`), { gunzip: nodeGunzip, details: true });
  const { stream, result } = replaySnapshot(snapshot, { trace: traces[0]! });
  const details = traces[0]!.details!;
  return { snapshot, stream, result, details, categories: categorize(stream, details) };
}

/** The request that allocated each step's marker. */
function markers(stream: RequestStream, truth: readonly Truth[]): number[] {
  return truth.map((t) => {
    for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && stream.size[i] === t.marker) return i;
    throw new Error(`no marker for step ${t.step}`);
  });
}

interface StepPeak {
  /** The replay's allocated bytes at the step's peak (block sizes, as memory_stats() counts them). */
  allocated: number;
  /** Live bytes by category then: the blocks' sizes, and the bytes requested. */
  blocks: Float64Array;
  requested: Float64Array;
}

/** Each step's peak of the replay's allocated bytes, from the previous marker to the step's own. */
function stepPeaks(stream: RequestStream, categories: Categories, allocated: Float64Array, ends: readonly number[]): StepPeak[] {
  const block = new Float64Array(stream.idCount);
  const blocks = new Float64Array(CATEGORY_COUNT);
  const requested = new Float64Array(CATEGORY_COUNT);
  const peaks: StepPeak[] = [];
  let best: StepPeak = { allocated: -1, blocks, requested };
  for (let i = 0, k = 0; i < stream.length && k < ends.length; i++) {
    if (i === ends[k]) {
      // The marker is the test's, not the program's; the peak was reset after it.
      peaks.push(best), k++;
      best = { allocated: -1, blocks, requested };
      continue;
    }
    const id = stream.id[i]!;
    const c = categories.of[id]!;
    if (stream.kind[i] === RequestKind.alloc) {
      block[id] = allocated[i]! - (i > 0 ? allocated[i - 1]! : 0);
      blocks[c]! += block[id]!;
      requested[c]! += stream.size[i]!;
    } else {
      blocks[c]! -= block[id]!;
      requested[c]! -= stream.size[i]!;
    }
    if (allocated[i]! > best.allocated) best = { allocated: allocated[i]!, blocks: blocks.slice(), requested: requested.slice() };
  }
  return peaks;
}

const within = (got: number, want: number, share: number): boolean => Math.abs(got - want) <= share * want;

describe.each(RUNS.map((r) => [r.run, r] as const))('%s', (_, run) => {
  const { stream, result, categories } = load(run.file);
  const ends = markers(stream, run.truth);

  test('at the end of each optimizer step: parameters, gradients and optimizer state within 2% of what the program read', () => {
    const at = bytesByCategoryAt(stream, categories, ends.map((r) => r - 1));
    run.truth.forEach((t, k) => {
      const got = at[k]!;
      expect({
        step: t.step,
        parameter: within(got[Category.parameter]!, t.parameter + t.buffer, 0.02),
        gradient: within(got[Category.gradient]!, t.gradient, 0.02),
        optimizer_state: within(got[Category.optimizerState]!, t.optimizer_state, 0.02),
      }).toEqual({ step: t.step, parameter: true, gradient: true, optimizer_state: true });
    });
  });

  test("at each step's peak: the replay's equals max_memory_allocated(), and activations plus temporaries are within 5% of the rest", () => {
    const peaks = stepPeaks(stream, categories, result.series.allocated, ends);
    run.truth.forEach((t, k) => {
      const { allocated, blocks, requested } = peaks[k]!;
      expect([t.step, allocated]).toEqual([t.step, t.max_allocated]);
      // The input alive at the peak: none, or one micro-batch's.
      const input = requested[Category.input]!;
      expect([t.step, input === 0 || within(input, run.input, 0.02)]).toEqual([t.step, true]);
      // The rest, in the allocator's bytes as max_memory_allocated() counts them: the peak less the
      // parameters, gradients, optimizer state and input there (each checked against the program's own
      // figures above), cuBLAS's workspaces and what the program keeps itself.
      const rest =
        t.max_allocated -
        blocks[Category.parameter]! -
        blocks[Category.gradient]! -
        blocks[Category.optimizerState]! -
        blocks[Category.input]! -
        run.workspace -
        t.held;
      const activity = blocks[Category.activation]! + blocks[Category.temporary]!;
      expect([t.step, rest, activity, within(activity, rest, 0.05)]).toEqual([t.step, rest, activity, true]);
    });
  });
});

describe('suspected leaks', () => {
  const leaksOf = (file: string) => {
    const { snapshot, stream, details, categories } = load(file);
    return suspectedLeaks(stream, categories, allocationStacks(stream, details, snapshot), stepStarts(categories));
  };
  test('the planted leak is named: its line, its category, 4 MiB a step', () => {
    const [leak, ...more] = leaksOf('leak.pickle.gz');
    expect(more).toEqual([]);
    expect(leak!.site).toMatch(/^leaks .*record-categories\.py:\d+$/);
    expect(leak!.frames.at(-1)).toBe(leak!.site);
    expect(leak!.bytesPerStep).toBe(RUNS.find((r) => r.run === 'leak')!.leak_bytes_per_step);
    expect(leak!.blocksPerStep).toBe(1);
    expect(leak!.category).toBe(Category.other);
  });
  test('the same program without it, and a cache that fills over three steps and settles, are not flagged', () => {
    expect(leaksOf('noleak.pickle.gz')).toEqual([]);
    expect(leaksOf('warmup.pickle.gz')).toEqual([]);
  });
});
