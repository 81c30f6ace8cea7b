// splitscope batch on a fleet: 200 files (copies of the real recordings and a few broken ones) under
// 3 configs, in worker threads: every row present once, broken files as error rows; a run killed
// midway and started again writes each row once; shards cut the files into deterministic shares; the
// Dask recipe (scripts/cluster/batch_on_dask.py) on a LocalCluster yields the single-machine rows;
// batch-summary says which config saves how many OOMs. Nothing lost, nothing hangs (issue 44): an
// --out that is not a results file is refused by name and left byte for byte, only a last line cut
// short by a kill is dropped; a FIFO, a device, a socket or a broken link is refused by name (on the
// command line: exit 2 before any work; in a folder: an error row, never opened); an --out that cannot
// be written is refused before the work; an empty shard writes its empty file; the recording's
// inconsistencies reach the rows as notes; batch-summary refuses what is not results, its JSON in
// snake_case; the Dask recipe keeps the shards that finished when one fails and resumes.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

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
    expect(s.recorded_ooms).toBe(44);
    expect(s.by_conf.map((c: { conf: string }) => c.conf)).toEqual(CONFS);
    // snake_case throughout, as the rows' keys are.
    expect(Object.keys(s).filter((k) => /[A-Z]/.test(k))).toEqual([]);
    expect(Object.keys(s.by_conf[0]).filter((k) => /[A-Z]/.test(k))).toEqual([]);
    const bad = join(tmp, 'bad.jsonl');
    writeFileSync(bad, '{"file": "a", "conf": null, "ok": false, "error": "cut"}\nnot json\n');
    expect(spawnSync(process.execPath, ['bin/splitscope.mjs', 'batch-summary', bad], { encoding: 'utf8' })).toMatchObject({ status: 2, stderr: expect.stringMatching(/bad\.jsonl, line 2: not a row/) });
  });
});

describe('nothing lost, nothing hangs', () => {
  const dir = join(tmp, 'small');
  const some = join(dir, 'some');
  const odd = join(dir, 'odd');
  const sock = join(odd, 'socket.pickle');
  let server: Server;
  // Each run bounded: a FIFO opened would hang it, and the test would fail on the timeout, not hang.
  const run = (command: string, ...args: string[]): SpawnSyncReturns<string> => {
    const r = spawnSync(process.execPath, ['bin/splitscope.mjs', command, ...args], { encoding: 'utf8', timeout: 30_000 });
    expect(r.signal, `timed out: ${args.join(' ')}`).toBeNull();
    return r;
  };
  const small = (...args: string[]) => run('batch', some, '--conf', CONFS[0]!, '--conf', CONFS[1]!, ...args);
  const summary = (...args: string[]) => run('batch-summary', ...args);
  let whole = '';

  beforeAll(async () => {
    mkdirSync(some, { recursive: true });
    for (const f of ['real/graphs.pickle.gz', 'real/mempool_turns__default.pickle.gz', 'bad/free-never-held.pickle.gz', 'bad/negative-alloc-size.pickle.gz']) {
      copyFileSync(`tests/fixtures/${f}`, join(some, f.split('/').pop()!));
    }
    mkdirSync(odd);
    copyFileSync('tests/fixtures/real/graphs.pickle.gz', join(odd, 'fine.pickle.gz'));
    expect(spawnSync('mkfifo', [join(odd, 'fifo.pickle')]).status).toBe(0);
    symlinkSync('/dev/zero', join(odd, 'zero.pickle.gz'));
    symlinkSync(join(odd, 'nowhere'), join(odd, 'broken.pkl'));
    symlinkSync(odd, join(odd, 'loop')); // a link back up: walked once
    server = createServer();
    await new Promise<void>((done) => server.listen(sock, done));
    const out = join(dir, 'whole.jsonl');
    expect(small('--out', out).status).toBe(0);
    whole = readFileSync(out, 'utf8');
    expect(whole.split('\n')).toHaveLength(4 * 2 + 1);
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  /** `text` as --out: refused (exit 2) naming it and the line, and left byte for byte. */
  const refused = (name: string, text: string | Buffer, line: number, why: RegExp): void => {
    const out = join(dir, name);
    writeFileSync(out, text);
    const r = small('--out', out);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${out}, line ${line}: not a row of splitscope batch`);
    expect(r.stderr).toMatch(why);
    expect(r.stderr).toContain(`${out} is left as it was`);
    expect(readFileSync(out)).toEqual(Buffer.isBuffer(text) ? text : Buffer.from(text));
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  };

  test('an --out that is not a results file: refused by name, left byte for byte', () => {
    refused('README.md', readFileSync('README.md'), 1, /not JSON/);
    refused('array.jsonl', '[1, 2]\n', 1, /a JSON array/);
    refused('object.jsonl', '{"hello": "world"}\n', 1, /a JSON object with no file/);
    refused('one-line.txt', 'hello', 1, /not JSON/);
    refused('snapshot.pickle.gz', readFileSync('tests/fixtures/real/graphs.pickle.gz'), 1, /not JSON/);
    const rows = whole.split('\n');
    // Rows, then a garbage line, then rows: not a truncation, a refusal naming the line.
    refused('garbage-between.jsonl', [...rows.slice(0, 3), 'garbage', ...rows.slice(3)].join('\n'), 4, /not JSON/);
    refused('row-like-between.jsonl', [...rows.slice(0, 2), '{"file": "x", "conf": null}', ...rows.slice(2)].join('\n'), 3, /no ok/);
  });

  test('a last line cut short by a kill is dropped and made again; a last row without its newline is kept', () => {
    const rows = whole.split('\n').filter(Boolean);
    const cut = join(dir, 'cut.jsonl');
    // The last file's second row cut short (a file's rows are written together, one after the other).
    writeFileSync(cut, `${rows.slice(0, 7).join('\n')}\n${rows[7]!.slice(0, 40)}`);
    const r = small('--out', cut);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/last line of .*cut\.jsonl was cut short/);
    expect(r.stderr).toMatch(/4 files x 2 configs; 1 files to do/);
    expect(rowsOf(cut).map(key).sort()).toEqual(rowsOf(join(dir, 'whole.jsonl')).map(key).sort());
    const unterminated = join(dir, 'unterminated.jsonl');
    writeFileSync(unterminated, rows.join('\n'));
    const again = small('--out', unterminated);
    expect(again.stderr).toMatch(/0 files to do/);
    expect(readFileSync(unterminated, 'utf8')).toBe(`${rows.join('\n')}\n`);
    // An empty file is results with no rows (an empty shard's).
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    expect(small('--out', empty).status).toBe(0);
    expect(rowsOf(empty)).toHaveLength(8);
  });

  test('a FIFO, a device or a socket named on the command line: exit 2 by name, before any work', () => {
    const out = join(dir, 'never.jsonl');
    for (const [path, what] of [
      [join(odd, 'fifo.pickle'), 'a FIFO'],
      ['/dev/zero', 'a character device'],
      [join(odd, 'zero.pickle.gz'), 'a character device'],
      [sock, 'a socket'],
    ] as const) {
      const r = run('batch', join(odd, 'fine.pickle.gz'), path, '--out', out);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${path} is ${what}`);
      expect(existsSync(out)).toBe(false);
    }
    expect(run('batch', join(odd, 'nowhere.pickle'), '--out', out)).toMatchObject({ status: 2, stderr: expect.stringContaining('nowhere.pickle: no such file') });
  });

  test('found in a folder: an error row naming it, never opened; the progress counts them', () => {
    const out = join(dir, 'odd.jsonl');
    const r = run('batch', odd, '--out', out);
    expect(r.status, r.stderr).toBe(0);
    const rows = rowsOf(out);
    const error = (name: string) => rows.find((x) => x.file === join(odd, name))?.error;
    expect(error('fifo.pickle')).toMatch(/fifo\.pickle is a FIFO \(named pipe\), not a snapshot file/);
    expect(error('zero.pickle.gz')).toMatch(/zero\.pickle\.gz is a character device/);
    expect(error('socket.pickle')).toMatch(/socket\.pickle is a socket/);
    expect(error('broken.pkl')).toMatch(/broken\.pkl: no such file/);
    expect(rows.find((x) => x.file === join(odd, 'fine.pickle.gz'))?.ok).toBe(true);
    expect(rows).toHaveLength(5);
    expect(r.stderr).toMatch(/5 of 5 files \(4 could not be read\)/);
    expect(r.stderr).toMatch(/done: .*4 could not be read/);
  });

  test('an --out that cannot be written: exit 2 by name, before the work', () => {
    for (const [out, why] of [
      [dir, /: it is a folder/],
      [join(dir, 'missing', 'r.jsonl'), /: its folder .*missing does not exist/],
      ['/proc/x', /: /],
      ['/dev/null', /: it is a character device/],
      [join(odd, 'fifo.pickle'), /: it is a FIFO/],
    ] as const) {
      const r = small('--out', out);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(`cannot write ${out}: `);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).not.toMatch(/files to do/);
    }
    // An input named as the output.
    const input = join(some, 'graphs.pickle.gz');
    const before = readFileSync(input);
    expect(small('--out', input)).toMatchObject({ status: 2, stderr: expect.stringContaining(`cannot write ${input}: it is`) });
    expect(readFileSync(input)).toEqual(before);
  });

  test("a recording's inconsistencies reach its rows as notes", () => {
    const rows = whole.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row & { notes?: string[] });
    const bad = rows.filter((x) => x.file.endsWith('free-never-held.pickle.gz'));
    expect(bad).toHaveLength(2);
    for (const r of bad) expect(r.notes).toEqual([expect.stringMatching(/^Inconsistent trace: the block at \d+ \(freed by trace entry 16\).*no segment holds it/)]);
    expect(rows.find((x) => x.file.endsWith('graphs.pickle.gz'))!.notes).toEqual([]);
    expect(summary(join(dir, 'whole.jsonl')).stdout).toMatch(/1 recording contradicts itself .*free-never-held/);
  });

  test('a shard with no files writes its empty file, and the summary of the shards still works', () => {
    const outs = [0, 1, 2, 3, 4, 5].map((i) => join(dir, `shard-${i}-of-6.jsonl`));
    for (const [i, out] of outs.entries()) expect(small('--out', out, '--shard', `${i}/6`).status).toBe(0);
    expect(outs.map((o) => rowsOf(o).length)).toEqual([2, 2, 2, 2, 0, 0]);
    expect(summary(...outs)).toMatchObject({ status: 0, stdout: expect.stringMatching(/^4 files, 3 read \(1 could not be\)/) });
    expect(summary(outs[5]!)).toMatchObject({ status: 2, stderr: expect.stringContaining(`${outs[5]} holds no rows of splitscope batch`) });
  });

  test('batch-summary on what is not results: exit 2 by name', () => {
    const write = (name: string, text: string): string => (writeFileSync(join(dir, name), text), join(dir, name));
    for (const [file, message] of [
      ['README.md', 'README.md, line 1: not a row of splitscope batch (not JSON)'],
      [write('s-array.jsonl', '[{"file": "a"}]\n'), 's-array.jsonl, line 1: not a row of splitscope batch (a JSON array, not a row)'],
      [write('s-object.jsonl', '{"hello": "world"}\n'), 's-object.jsonl, line 1: not a row of splitscope batch (a JSON object with no file)'],
      [write('s-number.jsonl', '3\n'), 's-number.jsonl, line 1: not a row of splitscope batch (JSON number, not a row)'],
      [write('s-empty.jsonl', ''), 's-empty.jsonl holds no rows of splitscope batch'],
      [dir, `${dir} is a directory, not a results file`],
      [join(odd, 'fifo.pickle'), 'fifo.pickle is a FIFO (named pipe), not a results file'],
      [join(dir, 'nope.jsonl'), 'cannot read'],
    ] as const) {
      const r = summary(file);
      expect(r.status, `${file}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain('undefined');
    }
  });

  test('the Dask recipe: a failed shard keeps the others\' rows, exits 1; run again, it makes only what is missing', () => {
    const out = join(dir, 'dask.jsonl');
    const mark = join(dir, 'break-shard-1');
    const node = join(dir, 'node-breaking-shard-1');
    // A Node that fails shard 1 of 4 (before any work) while the mark is there.
    writeFileSync(node, `#!/bin/sh\ncase "$*" in *"--shard 1/4"*) [ -e '${mark}' ] && { echo 'shard 1 broken on purpose' >&2; exit 3; };; esac\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
    writeFileSync(mark, '');
    const dask = () =>
      spawnSync('/usr/bin/python3', ['scripts/cluster/batch_on_dask.py', '--local', '2', '--shards', '4', '--node', node, '--out', out, '--conf', CONFS[0]!, some], { encoding: 'utf8', timeout: 120_000 });
    const first = dask();
    expect(first.status, first.stderr).toBe(1);
    expect(first.stderr).toMatch(/shard 1\/4 failed: splitscope batch exited 3: shard 1 broken on purpose/);
    expect(first.stderr).toMatch(/1 of 4 shards failed/);
    // The three shards that finished are in --out.
    expect(rowsOf(out)).toHaveLength(3);
    rmSync(mark);
    const again = dask();
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/shard 1\/4: 1 files to do/);
    for (const i of [0, 2, 3]) expect(again.stderr).toMatch(new RegExp(`shard ${i}/4: 0 files to do`));
    const want = rowsOf(join(dir, 'whole.jsonl')).filter((r) => r.conf === CONFS[0]);
    expect(rowsOf(out).sort((a, b) => key(a).localeCompare(key(b)))).toEqual(want.sort((a, b) => key(a).localeCompare(key(b))));
    // --out not a results file: refused, left as it was.
    const readme = join(dir, 'README.md');
    const before = readFileSync(readme);
    const r = spawnSync('/usr/bin/python3', ['scripts/cluster/batch_on_dask.py', '--local', '1', '--shards', '2', '--out', readme, some], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${readme}, line 1: not a row of splitscope batch`);
    expect(readFileSync(readme)).toEqual(before);
  }, 120_000);
});
