// The bad-input corpus (issue 44): each odd or hostile input a user, a CI or an attacker hands the CLI,
// generated small in a temporary folder, with the exit code and the message it must get. Nothing may
// hang (a FIFO, /dev/zero), nothing may change a file the command did not make, and hostile files are
// bounded by what they say, not by what their references expand to: each run is watched for its time
// (a hang fails at HANG_S) and its peak memory (python3's getrusage of the child). The batch's and the
// MCP server's own classes are in batch.test.ts and mcp.test.ts; the page server's are here.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { serveOpen, type OpenServer } from '../../src/cli/open-server';
import { writeHostileFiles } from './hostile-files';

const tmp = mkdtempSync(join(tmpdir(), 'splitscope-bad-'));
const at = (name: string): string => join(tmp, name);
const GOOD = resolve('tests/fixtures/transformer-s1__default.pickle.gz');
const REAL = resolve('tests/fixtures/real');
const JOB = resolve('tests/fixtures/job');
/** A run past this is a hang. */
const HANG_S = 30;

interface Run {
  code: number | null;
  out: string;
  err: string;
  /** The child's peak resident memory, bytes. */
  rss: number;
}

/** The CLI as a user runs it, with its peak memory measured (python3 waits for it and reads getrusage). */
function cli(args: readonly string[], env: Record<string, string> = {}): Run {
  const watch =
    'import resource, subprocess, sys\n' +
    'r = subprocess.run(sys.argv[1:])\n' +
    'print("RSS", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)\n' +
    'sys.exit(r.returncode)';
  const r = spawnSync('python3', ['-c', watch, process.execPath, 'bin/splitscope.mjs', ...args], {
    encoding: 'utf8',
    timeout: HANG_S * 1000,
    env: { ...process.env, GITHUB_ACTIONS: '', ...env },
  });
  const rss = Number(/RSS (\d+)\s*$/.exec(r.stderr ?? '')?.[1] ?? NaN);
  return { code: r.status, out: r.stdout ?? '', err: (r.stderr ?? '').replace(/RSS \d+\s*$/, ''), rss };
}

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

beforeAll(() => {
  const built = spawnSync(process.execPath, ['scripts/build-cli.mjs'], { encoding: 'utf8' });
  expect(built.status).toBe(0);
  spawnSync('mkfifo', [at('fifo')]);
  mkdirSync(at('folder'));
  writeFileSync(at('readme.md'), '# my notes\n\nnot yours to replace\n');
  const good = readFileSync(GOOD);
  writeFileSync(at('cut.pickle.gz'), good.subarray(0, good.length >> 1));
  writeHostileFiles(tmp);
}, 120_000);

/** A class of input: the command line, and what it must answer. */
interface Case {
  name: string;
  args: () => string[];
  code: number;
  err?: RegExp;
  out?: RegExp;
  env?: Record<string, string>;
}

const t = (name: string): string => at(name);
const CASES: Case[] = [
  // Paths that are not a regular file: refused by name at once, by every command that reads one.
  ...['replay', 'stats', 'explain', 'report', 'open'].map((c) => ({ name: `${c} /dev/zero`, args: () => [c, '/dev/zero'], code: 2, err: /\/dev\/zero is a character device, not a snapshot file/ })),
  { name: 'sweep /dev/urandom', args: () => ['sweep', '/dev/urandom', '--max-split', '128'], code: 2, err: /\/dev\/urandom is a character device/ },
  { name: 'replay a FIFO', args: () => ['replay', t('fifo')], code: 2, err: /is a FIFO \(named pipe\), not a snapshot file/ },
  { name: 'check with a FIFO', args: () => ['check', GOOD, t('fifo')], code: 2, err: /is a FIFO/ },
  { name: 'predict with /dev/zero', args: () => ['predict', `2:${GOOD}`, '4:/dev/zero', '--at', '3'], code: 2, err: /\/dev\/zero is a character device/ },
  { name: 'replay a folder', args: () => ['replay', t('folder')], code: 2, err: /is a directory, not a snapshot file/ },
  { name: 'replay a missing file', args: () => ['replay', t('missing.pickle')], code: 2, err: /cannot read .*missing\.pickle: no such file/ },
  // Files that cannot be read: exit 2 (1 is check's "a limit broken"), in every command.
  { name: 'replay a cut-off gzip', args: () => ['replay', t('cut.pickle.gz')], code: 2, err: /truncated|cut off/ },
  { name: 'check a cut-off gzip', args: () => ['check', GOOD, t('cut.pickle.gz')], code: 2, err: /truncated|cut off/ },
  { name: 'replay a pickle that would run code', args: () => ['replay', t('evil.pickle')], code: 2, err: /GLOBAL|run code|import/i },
  { name: 'replay a refused --conf', args: () => ['replay', GOOD, '--conf', 'max_split_size_mb:5'], code: 2, err: /max_split_size_mb/ },
  { name: 'check a refused --conf', args: () => ['check', GOOD, GOOD, '--conf', 'bogus_key:1'], code: 2, err: /bogus_key/ },
  // Hostile files: bounded by what they say.
  { name: 'replay one frame list shared by every entry', args: () => ['replay', t('shared.pickle')], code: 0, out: /requests:\s+15,?000|requests:\s+\d+/ },
  { name: 'explain one frame list shared by every entry', args: () => ['explain', t('shared.pickle')], code: 0, out: /No OOM/ },
  { name: 'replay --out JSON of a shared frame list', args: () => ['replay', t('shared.pickle'), '--out', t('shared.json')], code: 2, err: /as JSON .*Save it as a pickle/ },
  { name: 'a gzip bomb (1 MB holding 1 GiB)', args: () => ['replay', t('bomb.pickle.gz')], code: 2, err: /decompression bomb/ },
  { name: 'a LONG of millions of digits', args: () => ['replay', t('digits.pickle')], code: 2, err: /over 4300 digits/ },
  { name: 'a LONG4 of millions of bytes', args: () => ['replay', t('long4.pickle')], code: 2, err: /over 4300 digits/ },
  { name: 'JSON with a number of millions of digits', args: () => ['replay', t('digits.json')], code: 2, err: /addr should be an integer, got Infinity/ },
  { name: 'an allocation of 2^52 bytes', args: () => ['replay', t('huge-alloc.pickle')], code: 2, err: /device_traces\[0\]\[1\]\.size should be a size a GPU can hold/ },
  // 125,000 times its recordings: answered (no card holds it); at 10^8 one request passes any GPU: refused.
  { name: 'predict far beyond its recordings', args: () => ['predict', `4:${JOB}/rank_0.pickle.gz`, `8:${JOB}/rank_1.pickle.gz`, '--at', '1000000'], code: 0, out: /^needs: [\d.]+ GiB reserved/m },
  { name: 'predict past any GPU', args: () => ['predict', `4:${JOB}/rank_0.pickle.gz`, `8:${JOB}/rank_1.pickle.gz`, '--at', '100000000'], code: 2, err: /more than any GPU holds/ },
  // Command lines.
  { name: 'check --max-peak-reserved without a unit', args: () => ['check', GOOD, GOOD, '--max-peak-reserved', '5'], code: 2, err: /with its unit/ },
  { name: 'replay --until past the end', args: () => ['replay', GOOD, '--until', '99999999'], code: 2, err: /--until 99999999 is past the end/ },
  { name: "an option another command takes", args: () => ['stats', GOOD, '--max-split', '128'], code: 2, err: /stats does not take --max-split/ },
  { name: 'predict: one file twice', args: () => ['predict', `2:${GOOD}`, `4:${GOOD}`, '--at', '3'], code: 2, err: /one file twice/ },
  { name: 'predict: two at one size', args: () => ['predict', `2:${GOOD}`, `2:${REAL}/llama__default.pickle.gz`, '--at', '3'], code: 2, err: /two recordings at size 2/ },
  {
    name: 'predict: recordings under different configs',
    args: () => ['predict', `2:${REAL}/oom__default.pickle.gz`, `4:${REAL}/oom__expandable_segments=True.pickle.gz`, '--at', '3'],
    code: 2,
    err: /different PYTORCH_CUDA_ALLOC_CONF settings .*oom__default\.pickle\.gz under \(defaults\), .*under expandable_segments:True/,
  },
  { name: 'predict: a recording that ends at its OOM', args: () => ['predict', `2:${REAL}/llama__default.pickle.gz`, `4:${REAL}/oom__default.pickle.gz`, '--at', '3'], code: 2, err: /oom__default\.pickle\.gz ends at its OOM at request 10,94\d/ },
  { name: 'open beyond loopback without asking', args: () => ['open', GOOD, '--host', '0.0.0.0'], code: 2, err: /add --allow-remote/ },
  // Outputs that cannot be written: said by name before the work, exit 2, never 70.
  { name: 'check --junit a folder', args: () => ['check', GOOD, GOOD, '--junit', tmp], code: 2, err: /cannot write .*: it is a folder/ },
  { name: 'check --markdown in a missing folder', args: () => ['check', GOOD, GOOD, '--markdown', t('nowhere/m.md')], code: 2, err: /its folder .*nowhere does not exist/ },
  { name: 'check --junit under /proc', args: () => ['check', GOOD, GOOD, '--junit', '/proc/splitscope/x.xml'], code: 2, err: /cannot write \/proc\/splitscope\/x\.xml/ },
  { name: 'check --junit a name too long', args: () => ['check', GOOD, GOOD, '--junit', t(`${'x'.repeat(300)}.xml`)], code: 2, err: /the name is too long/ },
  { name: 'report -o over a file the user has', args: () => ['report', GOOD, '-o', t('readme.md')], code: 2, err: /readme\.md exists: .*--force/ },
  { name: 'replay --out over its own input', args: () => ['replay', GOOD, '--out', GOOD, '--force'], code: 2, err: /an input of this command/ },
];

describe('the bad-input corpus: each class refused by name, with its exit code', () => {
  const before = new Map<string, string>();
  beforeAll(() => {
    for (const f of [GOOD, at('readme.md'), at('shared.pickle')]) before.set(f, sha(f));
  });

  test.each(CASES)('$name', (c) => {
    const input = c.args().find((a) => a.startsWith(tmp) && a.length < 255 && statSync(a, { throwIfNoEntry: false })?.isFile());
    const r = cli(c.args(), c.env);
    expect(r.code, `${r.err}\n${r.out.slice(0, 400)}`).toBe(c.code);
    if (c.err) expect(r.err).toMatch(c.err);
    if (c.out) expect(r.out).toMatch(c.out);
    // Never a stack trace or "internal error", and a number of millions of digits is never printed.
    expect(r.err).not.toMatch(/internal error|    at |undefined/);
    expect(r.err.length + r.out.length).toBeLessThan(20_000);
    // Bounded by what the file says: its memory (above Node's own) at most 4x the input's size.
    const size = input ? statSync(input).size : 0;
    expect(r.rss).toBeLessThan(256 * 2 ** 20 + 4 * size);
  });

  test('no file the commands did not make was changed', () => {
    for (const [f, hash] of before) expect(sha(f), f).toBe(hash);
    expect(readFileSync(at('readme.md'), 'utf8')).toBe('# my notes\n\nnot yours to replace\n');
  });
});

describe('every command answers --help with its own options', () => {
  const OWN: Record<string, string[]> = {
    replay: ['--conf', '--until', '--out', '--force'],
    sweep: ['--max-split', '--param'],
    stats: ['--device'],
    report: ['--out', '--force'],
    open: ['--port', '--allow-remote'],
    predict: ['--at', '--fit'],
    explain: ['--capacity'],
    check: ['--max-peak-reserved', '--junit', '--markdown'],
    batch: ['--shard', '--workers'],
    'batch-summary': ['--json'],
    mcp: ['--out-dir', '--call-timeout'],
  };
  test.each(Object.entries(OWN))('%s --help', (command, options) => {
    const r = cli([command, '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^usage: splitscope ${command} `));
    for (const o of options) expect(r.out).toContain(o);
  });
});

describe('exit codes and outputs as automation reads them', () => {
  test('check --json under GITHUB_ACTIONS: stdout is one JSON object, the annotations go to stderr', () => {
    const r = cli(['check', GOOD, `${REAL}/llama__default.pickle.gz`, '--max-peak-reserved', '+1%', '--json'], { GITHUB_ACTIONS: 'true' });
    expect(r.code).toBe(1); // a limit broken: the finding's code
    expect(JSON.parse(r.out)).toMatchObject({ passed: false });
    expect(r.err).toMatch(/^::error title=splitscope check%3A peak reserved::/m);
    const text = cli(['check', GOOD, `${REAL}/llama__default.pickle.gz`, '--max-peak-reserved', '+1%'], { GITHUB_ACTIONS: 'true' });
    expect(text.out).toMatch(/^::error /m);
  });

  test('--out into a FIFO with a reader (a process substitution): the reader gets the whole file, every time', () => {
    // The reader reads to the end (as `cat` does): a writer that let go of the FIFO a moment before its
    // write gave it the end early, and then waited on a FIFO nobody read.
    const want = spawnSync(process.execPath, ['bin/splitscope.mjs', 'replay', GOOD, '--out', at('whole.pickle')]).status;
    expect(want).toBe(0);
    for (let k = 0; k < 4; k++) {
      const fifo = at(`out-fifo-${k}`);
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const r = spawnSync('bash', ['-c', `cat "$1" | wc -c > "$1.count" & sleep 0.2; "$2" bin/splitscope.mjs replay "$3" --out "$1" > /dev/null; wait`, 'bash', fifo, process.execPath, GOOD], {
        encoding: 'utf8',
        timeout: HANG_S * 1000,
      });
      expect(r.status).toBe(0);
      expect(Number(readFileSync(`${fifo}.count`, 'utf8'))).toBe(statSync(at('whole.pickle')).size);
    }
  });

  test('report -o over an existing file with --force replaces it whole', () => {
    const target = at('again.report.html');
    writeFileSync(target, 'old');
    expect(cli(['report', GOOD, '-o', target]).code).toBe(2);
    expect(readFileSync(target, 'utf8')).toBe('old');
    const r = cli(['report', GOOD, '-o', target, '--force']);
    expect(r.code).toBe(0);
    expect(readFileSync(target, 'utf8')).toMatch(/^<!doctype html>/i);
  });

  test('the inconsistency warnings reach stats --json, sweep, check and explain', () => {
    const bad = resolve('tests/fixtures/bad/free-never-held.pickle.gz');
    const warned = /Inconsistent trace: /;
    expect(JSON.parse(cli(['stats', bad, '--json']).out).notes.join('\n')).toMatch(warned);
    expect(JSON.parse(cli(['replay', bad, '--json']).out).notes.join('\n')).toMatch(warned);
    expect(JSON.parse(cli(['explain', bad, '--json']).out).notes.join('\n')).toMatch(warned);
    expect(cli(['sweep', bad, '--max-split', '128,none']).out).toMatch(/^warning: Inconsistent trace: /m);
    expect(cli(['sweep', bad, '--max-split', '128,none', '--json']).err).toMatch(/^warning: Inconsistent trace: /m);
    const check = cli(['check', bad, GOOD]);
    expect(check.out).toMatch(/^warning: free-never-held\.pickle\.gz: Inconsistent trace: /m);
    expect(JSON.parse(cli(['check', bad, GOOD, '--json']).out).baseline.notes.join('\n')).toMatch(warned);
  });
});

describe('splitscope open: one request never stops it, and it answers only its own names', () => {
  let server: OpenServer;
  const get = (path: string, host?: string): Promise<number> =>
    new Promise((done, fail) => {
      const url = new URL(server.url);
      const req = request({ host: url.hostname, port: url.port, path, headers: host ? { host } : {} }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      });
      req.on('error', fail);
      req.end();
    });
  beforeAll(async () => {
    const dist = at('dist');
    mkdirSync(dist);
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>splitscope</title>');
    server = await serveOpen(dist, 'run.pickle.gz', new Uint8Array([1, 2, 3]), '127.0.0.1', 0);
    return () => server.close();
  });

  test('a path that is not valid URL encoding is a 400, and the server goes on', async () => {
    expect(await get('/%zz')).toBe(400);
    expect(await get('/')).toBe(200);
  });

  test('a Host header it does not serve under (DNS rebinding) is refused; its own names are served', async () => {
    const port = new URL(server.url).port;
    expect(await get('/__open__/run.pickle.gz', `attacker.example:${port}`)).toBe(421);
    expect(await get('/', `evil.test`)).toBe(421);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) expect(await get('/', host)).toBe(200);
  });
});
