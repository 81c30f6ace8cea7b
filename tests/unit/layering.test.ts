// Imports point down the layers of DESIGN.md: views -> state -> worker/gpu -> trace -> allocator.
// allocator/ and trace/ must run unchanged in Node, a Web Worker and the page: no node:, DOM or React.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { expect, test } from 'vitest';

const SRC = resolve(__dirname, '../../src');
const RANK: Record<string, number> = { allocator: 0, trace: 1, worker: 2, gpu: 2, state: 3, views: 4, cli: 4 };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

const layerOf = (path: string): string => relative(SRC, path).split('/')[0]!;

test('no module imports from a layer above its own', () => {
  const problems: string[] = [];
  for (const file of files(SRC)) {
    const layer = layerOf(file);
    if (!(layer in RANK)) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
      const spec = match[1]!;
      if (spec.startsWith('.')) {
        const target = layerOf(resolve(dirname(file), spec));
        if (target in RANK && target !== layer && (RANK[target]! > RANK[layer]! || (layer === 'cli' && target !== 'allocator' && target !== 'trace'))) {
          problems.push(`${relative(SRC, file)} imports ${spec} (${target} is above ${layer})`);
        }
      } else if ((layer === 'allocator' || layer === 'trace') && /^(node:|react|d3|zustand)/.test(spec)) {
        problems.push(`${relative(SRC, file)} imports ${spec}: ${layer}/ must stay platform-free`);
      }
    }
  }
  expect(problems).toEqual([]);
});
