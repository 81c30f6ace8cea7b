// Hostile inputs (issue 44): each hostile file of the bad-input corpus through the CLI, its wall time and
// its peak memory above Node's own, beside the goal: under 10 s, and memory within 4x the file's size
// (above what the CLI takes to start). The corpus test holds each to its exit code and message.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeHostileFiles } from '../tests/unit/hostile-files';
import { median, report, ROOT } from './harness';

const WATCH =
  'import resource, subprocess, sys, time\n' +
  't = time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); t = time.time() - t\n' +
  'print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)';

/** Seconds and peak resident bytes of one CLI run. */
function run(args: readonly string[]): { s: number; rss: number } {
  const r = spawnSync('python3', ['-c', WATCH, process.execPath, join(ROOT, 'bin/splitscope.mjs'), ...args], { encoding: 'utf8' });
  const [s, rss] = r.stdout.trim().split(' ').map(Number);
  return { s: s!, rss: rss! };
}

export function benchBadInputs(): void {
  const dir = join(ROOT, 'bench/out/hostile');
  mkdirSync(dir, { recursive: true });
  writeHostileFiles(dir);
  const base = median([0, 1, 2].map(() => run(['--help']).rss));
  const job = join(ROOT, 'tests/fixtures/job');
  const cases: [string, string[], string][] = [
    ['replay: one frame list shared by 30,000 entries', ['replay', join(dir, 'shared.pickle')], 'shared.pickle'],
    ['explain: the same', ['explain', join(dir, 'shared.pickle')], 'shared.pickle'],
    ['replay --out JSON: the same (refused)', ['replay', join(dir, 'shared.pickle'), '--out', join(dir, 'x.json'), '--force'], 'shared.pickle'],
    ['gzip bomb, 1 MB holding 1 GiB (refused)', ['replay', join(dir, 'bomb.pickle.gz')], 'bomb.pickle.gz'],
    ['LONG of 2,000,000 digits (refused)', ['replay', join(dir, 'digits.pickle')], 'digits.pickle'],
    ['LONG4 of 3,000,000 bytes (refused)', ['replay', join(dir, 'long4.pickle')], 'long4.pickle'],
    ['an allocation of 2^52 bytes (refused)', ['replay', join(dir, 'huge-alloc.pickle')], 'huge-alloc.pickle'],
    ['predict --at 1,000,000 from sizes 4 and 8', ['predict', `4:${job}/rank_0.pickle.gz`, `8:${job}/rank_1.pickle.gz`, '--at', '1000000'], ''],
  ];
  const figures: Record<string, string> = { "the CLI's own resident memory (--help)": `${(base / 2 ** 20).toFixed(0)} MB` };
  for (const [name, args, file] of cases) {
    const runs = [0, 1, 2].map(() => run(args));
    const s = median(runs.map((r) => r.s));
    const above = median(runs.map((r) => r.rss)) - base;
    const size = file ? statSync(join(dir, file)).size : statSync(join(job, 'rank_0.pickle.gz')).size + statSync(join(job, 'rank_1.pickle.gz')).size;
    figures[name] = `${s.toFixed(2)} s (goal < 10 s; ${Math.min(...runs.map((r) => r.s)).toFixed(2)}-${Math.max(...runs.map((r) => r.s)).toFixed(2)}), ${(above / 2 ** 20).toFixed(0)} MB above that = ${(above / size).toFixed(1)}x the file's ${(size / 2 ** 20).toFixed(1)} MB (goal 4x)`;
  }
  report('hostile inputs: median of 3 runs, wall time and peak memory above the CLI\'s own', figures);
}
