// splitscope batch's throughput: files x configs per second on 1 worker thread and on 2, end to end in
// the CLI, on a fleet of copies of the real recordings (goal: 2 workers at least 1.7x one).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { median, report, ROOT } from './harness';

const SOURCES = ['real/oom__default.pickle.gz', 'real/vit_oom__default.pickle.gz', 'real/prefetch__default.pickle.gz', 'real/lss40__large_segment_size_mb=40.pickle.gz', 'real/phases.pickle.gz', 'job/rank_1.pickle.gz'];
const FILES = 120;
const CONFS = ['expandable_segments:True', 'max_split_size_mb:128', 'garbage_collection_threshold:0.6,max_split_size_mb:256'];

const args = (out: string, ...more: string[]): string[] => [join(ROOT, 'bin/splitscope.mjs'), 'batch', join(ROOT, 'bench/out/fleet'), ...CONFS.flatMap((c) => ['--conf', c]), '--out', out, ...more];

function seconds(workers: number): number {
  const out = join(ROOT, 'bench/out/batch.jsonl');
  rmSync(out, { force: true });
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args(out, '--workers', String(workers)), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return (performance.now() - t0) / 1e3;
}

/** The machine's own ceiling for this work: the two halves (--shard) in two processes at once, one worker each. */
function twoProcesses(): number {
  const outs = [0, 1].map((i) => join(ROOT, `bench/out/batch-${i}.jsonl`));
  for (const o of outs) rmSync(o, { force: true });
  const script = `
    const { spawn } = require('node:child_process');
    const runs = ${JSON.stringify(outs.map((o, i) => args(o, '--workers', '1', '--shard', `${i}/2`)))}.map((a) => new Promise((ok) => spawn(process.execPath, a, { stdio: 'ignore' }).on('exit', ok)));
    Promise.all(runs);`;
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', script]);
  return (performance.now() - t0) / 1e3;
}

export function benchBatch(): void {
  const fleet = join(ROOT, 'bench/out/fleet');
  if (!existsSync(join(fleet, `job-${FILES - 1}.pickle.gz`))) {
    mkdirSync(fleet, { recursive: true });
    for (let k = 0; k < FILES; k++) copyFileSync(join(ROOT, 'tests/fixtures', SOURCES[k % SOURCES.length]!), join(fleet, `job-${k}.pickle.gz`));
  }
  const one: number[] = [];
  const two: number[] = [];
  const apart: number[] = [];
  for (let i = 0; i < 3; i++) {
    one.push(seconds(1));
    two.push(seconds(2));
    apart.push(twoProcesses());
  }
  const rows = FILES * CONFS.length;
  const ratio = median(one) / median(two);
  const line = (xs: number[]) => `${(rows / median(xs)).toFixed(0)} rows/s (${xs.map((x) => x.toFixed(2)).join(' ')} s)`;
  report(`splitscope batch: ${FILES} files x ${CONFS.length} configs, end to end in the CLI, median of 3`, {
    '1 worker': line(one),
    '2 workers': line(two),
    '2 workers / 1 worker': `${ratio.toFixed(2)}x`,
    "the machine's ceiling: the two halves in two processes at once / 1 worker": `${(median(one) / median(apart)).toFixed(2)}x (${apart.map((x) => x.toFixed(2)).join(' ')} s)`,
    'goal: 2 workers at least 1.7x one': ratio >= 1.7 ? 'met' : 'NOT met',
  });
  // Two workers beside the CLI's main thread want more than this machine's cores: the device's figures.
  const device = JSON.parse(readFileSync(join(ROOT, 'bench/results/h100-batch.json'), 'utf8')) as { cores: number; seconds: Record<string, number[]> };
  const s = device.seconds;
  const deviceRatio = median(s['1']!) / median(s['2']!);
  report(`the same on the device machine, ${device.cores} cores (bench/results/h100-batch.json, scripts/device/batch-throughput.sh)`, {
    ...Object.fromEntries(Object.entries(s).map(([w, xs]) => [`${w} worker${w === '1' ? '' : 's'}`, line(xs)])),
    '2 workers / 1 worker': `${deviceRatio.toFixed(2)}x`,
    'goal: 2 workers at least 1.7x one': deviceRatio >= 1.7 ? 'met' : 'NOT met',
  });
}
