// splitscope mcp, driven by the official SDK's client over stdio as an agent drives it: the tools are
// listed with their hints, each answers on a real snapshot what the CLI answers (keys in snake_case,
// notes beside), a mistake comes back at once as a tool error naming the parameter, the tools write only
// into the server's folder and never over a file unless asked, calls run side by side, a call past its
// time limit is stopped, a message over the read limit is answered, and the server goes on serving.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, test } from 'vitest';

const DUMP = 'tests/fixtures/real/vit_oom__default.pickle.gz';
const J = 'tests/fixtures/job';
const BAD = 'tests/fixtures/bad/free-never-held.pickle.gz';
const client = new Client({ name: 'splitscope-test', version: '1.0.0' });
// The server's folder, and one outside it.
const outDir = mkdtempSync(join(tmpdir(), 'splitscope-mcp-out-'));
const elsewhere = mkdtempSync(join(tmpdir(), 'splitscope-mcp-else-'));
const realOut = realpathSync(outDir);

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['bin/splitscope.mjs', ...args, '--json'], { encoding: 'utf8' });
  return JSON.parse(r.stdout);
}

/** As the tools write their keys. */
const snake = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(snake)
    : v && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [/^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/.test(k) ? k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : k, snake(x)]))
      : v;

async function call(name: string, args: Record<string, unknown>, on = client): Promise<{ isError: boolean; text: string }> {
  const r = (await on.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  return { isError: r.isError === true, text: r.content[0]!.text };
}
const value = async (name: string, args: Record<string, unknown>) => {
  const r = await call(name, args);
  expect(r.isError, r.text).toBe(false);
  return JSON.parse(r.text);
};
const server = (...args: string[]) => new StdioClientTransport({ command: process.execPath, args: ['bin/splitscope.mjs', 'mcp', ...args], stderr: 'ignore' });

beforeAll(async () => {
  expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
  await client.connect(server('--out-dir', outDir));
}, 60_000);
afterAll(async () => {
  await client.close();
  rmSync(outDir, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

test('the tools, each with an input schema and its hints', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(['summarize', 'stats', 'replay', 'sweep', 'explain', 'compare', 'predict', 'batch', 'report']);
  for (const t of tools) expect([t.name, t.inputSchema.type]).toEqual([t.name, 'object']);
  expect(tools.find((t) => t.name === 'replay')!.inputSchema.required).toEqual(['file']);
  expect(Object.keys(tools.find((t) => t.name === 'sweep')!.inputSchema.properties!)).toContain('conf');
  for (const t of tools) {
    const writes = t.name === 'report' || t.name === 'batch';
    expect([t.name, t.annotations]).toEqual([t.name, { readOnlyHint: !writes, destructiveHint: writes, idempotentHint: true, openWorldHint: false }]);
  }
  // Where they write, said to the agent.
  expect(tools.find((t) => t.name === 'report')!.description).toContain(realOut);
});

test('each tool answers as the CLI does', async () => {
  const replayed = await value('replay', { file: DUMP, conf: 'expandable_segments:True' });
  const want = cli('replay', DUMP, '--conf', 'expandable_segments:True');
  expect([replayed.stats, replayed.ooms, replayed.categories]).toEqual([want.stats, want.ooms, want.categories]);

  const summary = await value('summarize', { file: DUMP });
  const asRecorded = cli('replay', DUMP);
  expect(summary).toMatchObject({ file: 'vit_oom__default.pickle.gz', requests: 15_883, 'reserved_bytes.all.peak': asRecorded.stats['reserved_bytes.all.peak'] });
  expect(summary.ooms[0].request).toBe(asRecorded.ooms[0].request);
  expect(summary.at_peak).toMatch(/^8\d% activations/);
  expect(summary.coverage).toEqual({ requests: 15_883, ends_at_oom: expect.any(Number), began_mid_run: false });

  const stats = await value('stats', { file: `${J}/rank_0.pickle.gz` });
  expect(stats).toEqual(snake(cli('stats', `${J}/rank_0.pickle.gz`)));
  expect(Object.keys(stats)).toEqual(['segsum', 'pools', 'free_blocks', 'fragmentation', 'stats', 'categories', 'notes']);

  const swept = await value('sweep', { file: DUMP, max_split: '64,256,none' });
  expect(swept.rows).toEqual(cli('sweep', DUMP, '--max-split', '64,256,none'));
  // On top of a config: each row is that config with its max_split_size_mb.
  const onTop = await value('sweep', { file: `${J}/rank_0.pickle.gz`, max_split: '64', conf: 'expandable_segments:True' });
  expect(onTop.rows[0].conf).toMatch(/expandable_segments:True/);

  const { notes, ...explained } = await value('explain', { file: DUMP });
  const { notes: cliNotes, ...cliExplained } = cli('explain', DUMP);
  expect(explained).toEqual(cliExplained);
  expect(notes).toEqual(expect.arrayContaining(cliNotes));

  const compared = await value('compare', { baseline: `${J}/rank_0.pickle.gz`, new: `${J}/rank_1.pickle.gz`, category: ['activation:+10%'] });
  const checked = spawnSync(process.execPath, ['bin/splitscope.mjs', 'check', `${J}/rank_0.pickle.gz`, `${J}/rank_1.pickle.gz`, '--category', 'activation:+10%', '--json'], { encoding: 'utf8' });
  const { notes: _c, ...comparison } = compared;
  expect(comparison).toEqual(JSON.parse(checked.stdout));
  expect(compared.passed).toBe(false);

  const predicted = await value('predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }, { size: 8, file: `${J}/rank_1.pickle.gz` }], at: 12 });
  const p = cli('predict', `4:${J}/rank_0.pickle.gz`, `8:${J}/rank_1.pickle.gz`, '--at', '12');
  expect([predicted.stats, predicted.prediction, predicted.needs]).toEqual([p.stats, p.prediction, p.needs]);
  const { notes: _f, ...fit } = await value('predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }, { size: 8, file: `${J}/rank_1.pickle.gz` }], fit: true, capacity: '1.7GB' });
  expect(fit).toEqual(cli('predict', `4:${J}/rank_0.pickle.gz`, `8:${J}/rank_1.pickle.gz`, '--fit', '--capacity', '1.7GB'));

  const batch = await value('batch', { inputs: [J], conf: ['expandable_segments:True'], out: 'rows.jsonl' });
  // The folder's four recordings, and its MANIFEST.json (named like a snapshot, not one): an error row.
  expect(batch).toMatchObject({ path: join(realOut, 'rows.jsonl'), files: 5, bytes: statSync(join(realOut, 'rows.jsonl')).size });
  expect(batch.rows.map((r: { file: string; conf: string; ok: boolean }) => [r.file.replace(/.*\//, ''), r.conf, r.ok])).toEqual([
    ['MANIFEST.json', 'expandable_segments:True', false],
    ...['annotated', 'rank_0', 'rank_1', 'rank_2'].map((f) => [`${f}.pickle.gz`, 'expandable_segments:True', true]),
  ]);
  expect(readFileSync(batch.path, 'utf8').trim().split('\n').map((l) => JSON.parse(l))).toEqual(batch.rows);
  expect(batch.summary).toMatchObject({ files: 5, by_conf: [{ conf: 'expandable_segments:True', rows: 4 }] });
  expect(await call('batch', { inputs: [`${J}/rank_0.pickle.gz`], out: 'rows.jsonl' })).toMatchObject({ isError: true, text: expect.stringMatching(/rows\.jsonl exists: .*\(overwrite: true\)/) });
}, 120_000);

test('a mistake: at once a tool error naming the parameter (and the file), and the server goes on', async () => {
  const fifo = join(elsewhere, 'pipe.pickle');
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  const errors: [string, Record<string, unknown>, RegExp][] = [
    ['replay', { file: join(elsewhere, 'missing.pickle') }, /^file: cannot read .*missing\.pickle: no such file$/],
    ['summarize', { file: '/dev/zero' }, /^file: \/dev\/zero is a character device, not a snapshot file$/],
    ['summarize', { file: fifo }, /^file: .*pipe\.pickle is a FIFO \(named pipe\)/],
    ['stats', { file: J }, /^file: .*job is a directory/],
    ['compare', { baseline: `${J}/rank_0.pickle.gz`, new: '/dev/urandom' }, /^new: \/dev\/urandom is a character device/],
    ['predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }, { size: 8, file: fifo }], at: 6 }, /^recordings\[1\]\.file: .*FIFO/],
    ['batch', { inputs: [J, '/dev/zero'] }, /^inputs\[1\]: \/dev\/zero is a character device/],
    ['replay', { file: DUMP, capacity: 'lots' }, /^capacity: 'lots' is not a size/],
    ['explain', { file: DUMP, conf: 'max_split_size_mb:1' }, /^conf: .*max_split_size_mb too small, must be >= 20 \(got 1\)/],
    ['sweep', { file: DUMP, max_split: '64,x' }, /^max_split: 'x' is not a max_split_size_mb value/],
    ['sweep', { file: DUMP, values: '1,2' }, /^values: values go with param/],
    ['compare', { baseline: `${J}/rank_0.pickle.gz`, new: `${J}/rank_1.pickle.gz`, category: ['weights'] }, /^category takes CATEGORY:GROWTH/],
    ['compare', { baseline: `${J}/rank_0.pickle.gz`, new: `${J}/rank_1.pickle.gz`, max_peak_reserved: 'lots' }, /^max_peak_reserved takes the growth/],
    ['predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }, { size: 8, file: `${J}/rank_1.pickle.gz` }] }, /^predict needs `at` .* neither was given$/],
    ['predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }, { size: 8, file: `${J}/rank_1.pickle.gz` }], fit: true }, /^fit needs capacity/],
    ['stats', { file: `${J}/rank_0.pickle.gz`, device: 3 }, /^device: .* has no trace for device 3/],
  ];
  for (const [tool, args, text] of errors) expect([tool, await call(tool, args)]).toEqual([tool, { isError: true, text: expect.stringMatching(text) }]);
  // Found in the work, and still in the tool's words.
  expect(await call('summarize', { file: 'package.json' })).toMatchObject({ isError: true });
  expect(await call('predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }] , at: 8 })).toMatchObject({ isError: true });
  // Still serving.
  expect((await value('summarize', { file: `${J}/rank_0.pickle.gz` })).requests).toBeGreaterThan(0);
}, 60_000);

test('a recording that contradicts itself: its warnings reach every answer', async () => {
  const copy = join(elsewhere, 'copy.pickle.gz');
  copyFileSync(BAD, copy);
  const warned = (notes: string[]) => notes.some((n) => /Inconsistent trace: .*no segment holds it/.test(n));
  for (const tool of ['summarize', 'stats', 'replay', 'sweep', 'explain']) expect([tool, warned((await value(tool, { file: BAD })).notes)]).toEqual([tool, true]);
  const compared = await value('compare', { baseline: BAD, new: copy });
  expect(compared.notes.filter((n: string) => /^(baseline|new) \(.*\): Inconsistent trace:/.test(n))).toHaveLength(2);
  const predicted = await value('predict', { recordings: [{ size: 4, file: BAD }, { size: 8, file: copy }], at: 6 });
  expect(predicted.notes.filter((n: string) => /^(free-never-held|copy)\.pickle\.gz: Inconsistent trace:/.test(n))).toHaveLength(2);
  const batch = await value('batch', { inputs: [BAD], out: 'bad.jsonl' });
  expect(warned(batch.rows[0].notes)).toBe(true);
}, 60_000);

test("report writes only into the server's folder, and never over a file unless asked", async () => {
  const file = `${J}/rank_0.pickle.gz`;
  const written = await value('report', { file, out: 'r.html' });
  const target = join(realOut, 'r.html');
  expect(written).toEqual({ path: target, bytes: statSync(target).size });
  const first = readFileSync(target);
  // Asked again: refused, the file as it was; with overwrite: true, replaced.
  expect(await call('report', { file, out: 'r.html', conf: 'expandable_segments:True' })).toEqual({ isError: true, text: expect.stringMatching(/^out: .*r\.html exists: .*\(overwrite: true\)/) });
  expect(readFileSync(target).equals(first)).toBe(true);
  expect((await value('report', { file, out: target, conf: 'expandable_segments:True', overwrite: true })).path).toBe(target);
  expect(readFileSync(target).equals(first)).toBe(false);
  // A file the tool did not write: left byte for byte.
  writeFileSync(join(outDir, 'mine.html'), 'mine');
  expect((await call('report', { file, out: 'mine.html' })).isError).toBe(true);
  expect(readFileSync(join(outDir, 'mine.html'), 'utf8')).toBe('mine');

  // Out of the folder: an absolute path elsewhere, .., a link to a file or a folder outside.
  writeFileSync(join(elsewhere, 'kept.html'), 'kept');
  symlinkSync(join(elsewhere, 'kept.html'), join(outDir, 'link.html'));
  symlinkSync(elsewhere, join(outDir, 'away'));
  mkdirSync(join(outDir, 'sub'));
  const outside: [string, RegExp][] = [
    [join(elsewhere, 'abs.html'), /^out: .*abs\.html is outside the folder this server writes into, /],
    ['../up.html', /^out: \.\.\/up\.html is outside/],
    ['sub/../../up.html', /is outside/],
    ['link.html', /^out: link\.html leads \(through a symbolic link\) outside/],
    ['away/x.html', /^out: away\/x\.html leads \(through a symbolic link\) outside/],
    ['nowhere/x.html', /^out: the folder of nowhere\/x\.html does not exist/],
  ];
  for (const [out, text] of outside) expect([out, await call('report', { file, out, overwrite: true })]).toEqual([out, { isError: true, text: expect.stringMatching(text) }]);
  expect(readFileSync(join(elsewhere, 'kept.html'), 'utf8')).toBe('kept');
  expect([existsSync(join(elsewhere, 'abs.html')), existsSync(join(elsewhere, 'x.html')), existsSync(join(outDir, '..', 'up.html'))]).toEqual([false, false, false]);
  // Inside, through a folder of its own: fine.
  expect((await value('report', { file, out: 'sub/../sub/in.html' })).path).toBe(join(realOut, 'sub', 'in.html'));
}, 60_000);

test('calls run side by side: a fast answer and a fast error come before a slow answer', async () => {
  const order: string[] = [];
  // A sweep of the 900k-request recording: seconds, where the others take a fraction of one even on a loaded machine.
  const slow = call('sweep', { file: 'tests/fixtures/random-s3__default.pickle.gz' }).then((r) => order.push(`slow ${r.isError}`));
  const fast = call('summarize', { file: BAD }).then((r) => order.push(`fast ${r.isError}`));
  const error = call('replay', { file: join(elsewhere, 'missing.pickle') }).then((r) => order.push(`error ${r.isError}`));
  await Promise.all([slow, fast, error]);
  expect(order).toEqual(['error true', 'fast false', 'slow false']);
}, 60_000);

test('a message over the 10 MiB read limit is answered with an error, and the server goes on', async () => {
  await expect(client.callTool({ name: 'summarize', arguments: { file: 'x'.repeat(11 * 2 ** 20) } })).rejects.toMatchObject({ code: -32600, message: expect.stringMatching(/over this server's limit of 10485760 bytes/) });
  expect((await value('summarize', { file: BAD })).requests).toBe(133);
}, 60_000);

test('a call past the time limit is stopped, and the server goes on', async () => {
  const limited = new Client({ name: 'splitscope-test', version: '1.0.0' });
  await limited.connect(server('--call-timeout', '0.05'));
  try {
    expect(await call('summarize', { file: DUMP }, limited)).toEqual({ isError: true, text: expect.stringMatching(/^summarize took longer than 0\.05 s and was stopped \(splitscope mcp --call-timeout SECONDS/) });
    expect(await call('replay', { file: join(elsewhere, 'missing.pickle') }, limited)).toMatchObject({ isError: true, text: expect.stringMatching(/no such file/) });
    expect((await limited.listTools()).tools).toHaveLength(9);
  } finally {
    await limited.close();
  }
}, 60_000);
