// splitscope batch on a fleet: 200 files (copies of the real recordings and a few broken ones) under
// 3 configs, in worker threads: every row present once, broken files as error rows; a run killed
// midway and started again writes each row once; shards cut the files into deterministic shares; the
// Dask recipe (scripts/cluster/batch_on_dask.py) on a LocalCluster yields the single-machine rows;
// batch-summary says which config saves how many OOMs.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';

const SOURCES = [
  'real/oom__default.pickle.gz',
  'real/vit_oom__default.pickle.gz',
  'real/prefetch__default.pickle.gz',
  'real/lss40__large_segment_size_mb=40.pickle.gz',
  'real/compiled__default.pickle.gz',
  'real/graphs.pickle.gz',
  'real/phases.pickle.gz',
  'job/rank_0.pickle.gz',
  'job/rank_1.pickle.gz',
];
const CONFS = ['expandable_segments:True', 'max_split_size_mb:128', 'garbage_collection_threshold:0.6,max_split_size_mb:256'];
const tmp = mkdtempSync(join(tmpdir(), 'splitscope-batch-'));
const fleet = join(tmp, 'fleet');
const BROKEN = ['broken-cut.pickle.gz', 'broken-random.pickle', 'broken-empty.pickle', 'broken-not-a-snapshot.json'];

type Row = { file: string; conf: string | null; ok: boolean; error?: string; first_oom_request?: number | null };
const rowsOf = (path: string): Row[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
const key = (r: Row): string => JSON.stringify([r.file, r.conf]);
const confArgs = CONFS.flatMap((c) => ['--conf', c]);
const batch = (...args: string[]) => spawnSync(process.execPath, ['bin/splitscope.mjs', 'batch', ...args], { encoding: 'utf8' });

beforeAll(() => {
  expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
  mkdirSync(fleet);
  for (let k = 0; k < 196; k++) copyFileSync(`tests/fixtures/${SOURCES[k % SOURCES.length]}`, join(fleet, `job-${String(k).padStart(3, '0')}.pickle.gz`));
  writeFileSync(join(fleet, BROKEN[0]!), readFileSync('tests/fixtures/real/oom__default.pickle.gz').subarray(0, 5000));
  writeFileSync(join(fleet, BROKEN[1]!), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) & 255)));
  writeFileSync(join(fleet, BROKEN[2]!), '');
  writeFileSync(join(fleet, BROKEN[3]!), JSON.stringify({ hello: 'world' }));
  expect(readdirSync(fleet)).toHaveLength(200);
});

describe('splitscope batch', () => {
  const all = join(tmp, 'all.jsonl');

  test('200 files x 3 configs on 2 workers: every row once, broken files as error rows', () => {
    const r = batch(fleet, ...confArgs, '--out', all, '--workers', '2');
    expect(r.status, r.stderr).toBe(0);
    const rows = rowsOf(all);
    expect(rows).toHaveLength(600);
    expect(new Set(rows.map(key)).size).toBe(600);
    const errors = rows.filter((x) => !x.ok);
    expect(new Set(errors.map((x) => x.file.split('/').pop()))).toEqual(new Set(BROKEN));
    expect(errors).toHaveLength(12);
    for (const e of errors) expect(e.error).toMatch(/\S/);
    // A copy replays as its original: the same row whatever its name.
    const same = rows.filter((x) => x.ok && x.conf === CONFS[0] && /job-00[09]\./.test(x.file)).map(({ file: _f, ...rest }) => rest);
    expect(same[0]).toEqual(same[1]);
  }, 180_000);

  test('killed midway and started again: each row written once', async () => {
    const out = join(tmp, 'resumed.jsonl');
    const child = spawn(process.execPath, ['bin/splitscope.mjs', 'batch', fleet, ...confArgs, '--out', out, '--workers', '2'], { stdio: 'ignore' });
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      let n = 0;
      try {
        n = readFileSync(out, 'utf8').split('\n').length;
      } catch {}
      if (n > 150) break;
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const before = readFileSync(out, 'utf8').split('\n').filter((l) => l !== '').length;
    expect(before).toBeLessThan(600);
    const again = batch(fleet, ...confArgs, '--out', out, '--workers', '2');
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/200 files x 3 configs; \d+ files to do/);
    const rows = rowsOf(out);
    expect(rows).toHaveLength(600);
    expect(new Set(rows.map(key)).size).toBe(600);
    // A third run finds nothing to do.
    expect(batch(fleet, ...confArgs, '--out', out).stderr).toMatch(/0 files to do/);
  }, 180_000);

  test('shards: deterministic shares whose rows together are the whole', () => {
    const parts = [0, 1, 2].map((i) => {
      const out = join(tmp, `shard-${i}.jsonl`);
      expect(batch(fleet, '--conf', CONFS[0]!, '--out', out, '--shard', `${i}/3`, '--workers', '1').status).toBe(0);
      return rowsOf(out);
    });
    const sizes = parts.map((p) => p.length);
    expect(sizes.reduce((a, b) => a + b)).toBe(200);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    const whole = new Map(rowsOf(all).filter((r) => r.conf === CONFS[0]).map((r) => [key(r), r]));
    for (const r of parts.flat()) expect(r).toEqual(whole.get(key(r)));
    expect(batch(fleet, '--out', join(tmp, 'x.jsonl'), '--shard', '3/3')).toMatchObject({ status: 2, stderr: expect.stringMatching(/--shard takes I\/N/) });
  }, 180_000);

  test('the Dask recipe on a LocalCluster yields the single-machine rows', () => {
    const some = join(tmp, 'some');
    mkdirSync(some);
    // The broken files (first by name) and 15 copies.
    for (const f of readdirSync(fleet).sort().slice(0, 19)) copyFileSync(join(fleet, f), join(some, f));
    const single = join(tmp, 'single.jsonl');
    expect(batch(some, ...confArgs, '--out', single).status).toBe(0);
    const dask = join(tmp, 'dask.jsonl');
    // Debian's python3-distributed (CI installs it); /usr/bin/python3 is the interpreter it is installed for.
    const r = spawnSync('/usr/bin/python3', ['scripts/cluster/batch_on_dask.py', '--local', '2', '--shards', '4', '--out', dask, ...confArgs, resolve(some)], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const sort = (rows: Row[]) => [...rows].sort((a, b) => key(a).localeCompare(key(b)));
    expect(sort(rowsOf(dask))).toEqual(sort(rowsOf(single)));
    expect(rowsOf(dask)).toHaveLength(19 * 3);
    expect(rowsOf(dask).filter((x) => !x.ok)).toHaveLength(4 * 3);
  }, 180_000);

  test('batch-summary: which config saves how many OOMs, and which are not fragmentation', () => {
    const r = spawnSync(process.execPath, ['bin/splitscope.mjs', 'batch-summary', all], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^200 files, 196 read \(4 could not be\)\.\nOf \d+ OOMs \(files that ran out of memory as recorded\), as far as each recording reaches:\n {2}expandable_segments:True +\d+\.\d% avoided/);
    const s = JSON.parse(spawnSync(process.execPath, ['bin/splitscope.mjs', 'batch-summary', all, '--json'], { encoding: 'utf8' }).stdout);
    // The two OOM dumps among the sources, copied 22 times each.
    expect(s.recordedOoms).toBe(44);
    expect(s.byConf.map((c: { conf: string }) => c.conf)).toEqual(CONFS);
    const bad = join(tmp, 'bad.jsonl');
    writeFileSync(bad, '{"file": "a"}\nnot json\n');
    expect(spawnSync(process.execPath, ['bin/splitscope.mjs', 'batch-summary', bad], { encoding: 'utf8' })).toMatchObject({ status: 2, stderr: expect.stringMatching(/bad\.jsonl, line 2: not a row/) });
  });
});
