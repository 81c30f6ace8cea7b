// The CLI end to end: process start to exit, as a user runs it, through the bin file and through npx.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fixture, median, report, ROOT } from './harness';

const ARGS = ['replay', fixture('random-s3__default.pickle.gz'), '--capacity', '6GiB', '--json'];

// The runs are spawned by a small Node process of their own, not by this one: forking the bench's
// process, which holds ~900 MB by the time this runs, added 13-15 ms to every run (a user's shell is small).
const TIMER = `
const { spawnSync } = require('node:child_process');
const [cmd, runs, ...args] = JSON.parse(process.argv[1]);
const out = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  out.push((performance.now() - t0) / 1e3);
  if (r.status !== 0) { console.error(cmd + ' ' + args.join(' ') + ' failed: ' + r.stderr); process.exit(1); }
}
console.log(JSON.stringify(out));
`;

/** Seconds from spawn to exit, `runs` times; throws if a run fails. */
function times(cmd: string, args: string[], runs: number): number[] {
  const r = spawnSync(process.execPath, ['-e', TIMER, JSON.stringify([cmd, runs, ...args])], { encoding: 'utf8', cwd: ROOT });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as number[];
}

export function benchCli(): void {
  const bin = times(process.execPath, [join(ROOT, 'bin/splitscope.mjs'), ...ARGS], 9);
  const npx = times('npx', ['splitscope', ...ARGS], 3);
  const version = times(process.execPath, [join(ROOT, 'bin/splitscope.mjs'), '--help'], 5);
  const t = median(bin);
  report('CLI: splitscope replay random-s3__default.pickle.gz --capacity 6GiB --json (process start to exit)', {
    'node bin/splitscope.mjs, median of 9 (s)': `${t.toFixed(3)} (${bin.map((x) => x.toFixed(3)).join(' ')})`,
    'npx splitscope, median of 3 (s)': `${median(npx).toFixed(3)} (${npx.map((x) => x.toFixed(3)).join(' ')})`,
    'start-up alone (splitscope --help), median of 5 (s)': median(version).toFixed(3),
    'goal: under 0.5 s via node bin/splitscope.mjs': t < 0.5 ? 'met' : 'NOT met',
  });
}
