// Imports point down the layers of DESIGN.md, and inside a layer down its folders; each rule says why
// (as Perfetto's tools/check_imports). A rule broken by a file names the file, the import and the rule.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, test } from 'vitest';

const SRC = resolve(__dirname, '../../src');

/** Layers from the bottom: a module may import its own layer and those below. */
const LAYER_RANK: Record<string, number> = { lib: 0, allocator: 1, trace: 2, plot: 3, worker: 4, gpu: 4, state: 5, views: 6, cli: 6 };
/** Steps of the trace layer's data flow (DESIGN.md: file -> request stream (what each request is: categories) -> replay -> sweeps of replays,
 * and predictions of streams at other sizes, which replay like any other). */
const TRACE_RANK: Record<string, number> = { pickle: 0, snapshot: 1, stream: 2, measures: 2, categories: 2, replay: 3, sweep: 4, predict: 4, explain: 5, check: 5, batch: 5 };

interface Import {
  file: string;
  spec: string;
  /** Paths relative to src/, split into folders. */
  from: string[];
  to: string[];
}

const RULES: { why: string; broken(i: Import): boolean }[] = [
  {
    why: 'imports point down the layers (lib, allocator, trace, plot, worker and gpu, state, views and cli): each layer works without those above it',
    broken: ({ from, to }) => (LAYER_RANK[to[0]!] ?? -1) > (LAYER_RANK[from[0]!] ?? Infinity),
  },
  {
    why: 'the CLI runs in Node with no DOM, worker or GPU: it imports only lib, allocator and trace',
    broken: ({ from, to }) => from[0] === 'cli' && !['lib', 'allocator', 'trace', 'cli'].includes(to[0]!),
  },
  {
    why: 'the replay and sweep workers have no GPU, and the GPU code replays nothing the worker does: neither imports the other',
    broken: ({ from, to }) => (from[0] === 'worker' && to[0] === 'gpu') || (from[0] === 'gpu' && to[0] === 'worker'),
  },
  {
    why: 'the pickle codec reads any pickle, a snapshot or not: trace/pickle imports only lib and itself',
    broken: ({ from, to }) => from[1] === 'pickle' && from[0] === 'trace' && !(to[0] === 'lib' || (to[0] === 'trace' && to[1] === 'pickle')),
  },
  {
    why: 'inside trace/, a step of the data flow uses only the steps before it (pickle, snapshot, stream and measures, replay, sweep and predict): nothing below sweep imports sweep',
    broken: ({ from, to }) => from[0] === 'trace' && to[0] === 'trace' && (TRACE_RANK[to[1]!] ?? 0) > (TRACE_RANK[from[1]!] ?? 0),
  },
  {
    why: 'the allocator decides with any model of addresses: outside allocator/placement it imports only the interface, segment-placement.ts',
    broken: ({ from, to }) => from[0] === 'allocator' && from[1] !== 'placement' && to[0] === 'allocator' && to[1] === 'placement' && to[2]?.replace(/\.ts$/, '') !== 'segment-placement',
  },
  {
    why: 'the GPU stress arena and the segment-map renderer share only the device guards in gpu/',
    broken: ({ from, to }) => from[0] === 'gpu' && to[0] === 'gpu' && ['stress', 'segment-map'].includes(from[1]!) && ['stress', 'segment-map'].includes(to[1]!) && from[1] !== to[1],
  },
];

/** Packages a layer that runs in Node, a Web Worker and the page (unchanged) may not import. */
const PLATFORM_FREE = ['lib', 'allocator', 'trace', 'plot'];
const PLATFORM_PACKAGES = /^(node:|react|d3|zustand|comlink)/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

const parts = (path: string): string[] => relative(SRC, path).split('/');

test('no module breaks a layering rule', () => {
  const problems: string[] = [];
  for (const file of files(SRC)) {
    const from = parts(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
      const spec = match[1]!;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec.split('?')[0]!);
        if (!target.startsWith(SRC)) continue; // shaders/ and the like
        const i: Import = { file, spec, from, to: parts(target) };
        for (const rule of RULES) if (rule.broken(i)) problems.push(`${relative(SRC, file)} imports ${spec}: ${rule.why}`);
      } else if (PLATFORM_FREE.includes(from[0]!) && PLATFORM_PACKAGES.test(spec)) {
        problems.push(`${relative(SRC, file)} imports ${spec}: ${from[0]}/ must run unchanged in Node, a Web Worker and the page`);
      }
    }
  }
  expect(problems).toEqual([]);
});

test('every folder of src/ has a place in the layers', () => {
  const layers = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
  expect(layers.filter((l) => !(l in LAYER_RANK))).toEqual([]);
  const steps = readdirSync(join(SRC, 'trace')).filter((name) => statSync(join(SRC, 'trace', name)).isDirectory());
  expect(steps.filter((s) => !(s in TRACE_RANK))).toEqual([]);
});
