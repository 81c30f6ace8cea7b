// The CLI end to end: process start to exit, as a user runs it.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fixture, median, report, ROOT } from './harness';

export function benchCli(): void {
  const args = [join(ROOT, 'bin/splitscope.mjs'), 'replay', fixture('random-s3__default.pickle.gz'), '--capacity', '6GiB', '--json'];
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
    times.push((performance.now() - t0) / 1e3);
    if (r.status !== 0) throw new Error(`splitscope replay failed: ${r.stderr}`);
  }
  const t = median(times);
  report('CLI: splitscope replay random-s3__default.pickle.gz --capacity 6GiB --json (process start to exit)', {
    'median of 5 (s)': t.toFixed(3),
    'all runs (s)': times.map((x) => x.toFixed(3)).join(' '),
    'goal: under 1 s': t < 1 ? 'met' : 'NOT met',
  });
}
