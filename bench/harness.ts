// Small helpers shared by the benchmarks: best-of-N timing and uniform reporting.
import { join } from 'node:path';

/** npm runs scripts from the project root. */
export const ROOT = process.cwd();

export function fixture(file: string): string {
  return join(ROOT, 'tests/fixtures', file);
}

/** The fastest of `runs` calls, in seconds (the first call also warms the JIT up). */
export function best(runs: number, fn: () => unknown): number {
  let fastest = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    fastest = Math.min(fastest, (performance.now() - t0) / 1e3);
  }
  return fastest;
}

export { median } from './median';

export function report(title: string, figures: Record<string, string | number>): void {
  console.log(`\n${title}`);
  const width = Math.max(...Object.keys(figures).map((k) => k.length));
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(width)}  ${v}`);
}
