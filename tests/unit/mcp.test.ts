// splitscope mcp, driven by the official SDK's client over stdio as an agent drives it: the tools are
// listed, each answers on a real snapshot what the CLI answers, and a bad path or a config PyTorch
// would refuse comes back as a tool error while the server goes on serving.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, test } from 'vitest';

const DUMP = 'tests/fixtures/real/vit_oom__default.pickle.gz';
const J = 'tests/fixtures/job';
const client = new Client({ name: 'splitscope-test', version: '1.0.0' });
const tmp = mkdtempSync(join(tmpdir(), 'splitscope-mcp-'));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['bin/splitscope.mjs', ...args, '--json'], { encoding: 'utf8' });
  return JSON.parse(r.stdout);
}

async function call(name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  return { isError: r.isError === true, text: r.content[0]!.text };
}
const value = async (name: string, args: Record<string, unknown>) => {
  const r = await call(name, args);
  expect(r.isError, r.text).toBe(false);
  return JSON.parse(r.text);
};

beforeAll(async () => {
  expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/splitscope.mjs', 'mcp'], stderr: 'ignore' }));
}, 60_000);
afterAll(async () => {
  await client.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('the tools, each with an input schema', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(['summarize', 'replay', 'sweep', 'explain', 'compare', 'predict', 'report']);
  for (const t of tools) expect([t.name, t.inputSchema.type]).toEqual([t.name, 'object']);
  expect(tools.find((t) => t.name === 'replay')!.inputSchema.required).toEqual(['file']);
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

  expect(await value('sweep', { file: DUMP, max_split: '64,256,none' })).toEqual(cli('sweep', DUMP, '--max-split', '64,256,none'));

  const explained = await value('explain', { file: DUMP });
  const { notes: _notes, ...rest } = explained;
  expect(rest).toEqual(cli('explain', DUMP));

  const compared = await value('compare', { baseline: `${J}/rank_0.pickle.gz`, new: `${J}/rank_1.pickle.gz`, category: ['activation:+10%'] });
  const checked = spawnSync(process.execPath, ['bin/splitscope.mjs', 'check', `${J}/rank_0.pickle.gz`, `${J}/rank_1.pickle.gz`, '--category', 'activation:+10%', '--json'], { encoding: 'utf8' });
  expect(compared).toEqual(JSON.parse(checked.stdout));
  expect(compared.passed).toBe(false);

  const predicted = await value('predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }, { size: 8, file: `${J}/rank_1.pickle.gz` }], at: 12 });
  const p = cli('predict', `4:${J}/rank_0.pickle.gz`, `8:${J}/rank_1.pickle.gz`, '--at', '12');
  expect([predicted.stats, predicted.prediction, predicted.needs]).toEqual([p.stats, p.prediction, p.needs]);
  const fit = await value('predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }, { size: 8, file: `${J}/rank_1.pickle.gz` }], fit: true, capacity: '1.7GB' });
  expect(fit).toEqual(cli('predict', `4:${J}/rank_0.pickle.gz`, `8:${J}/rank_1.pickle.gz`, '--fit', '--capacity', '1.7GB'));

  const out = join(tmp, 'vit.report.html');
  const report = await value('report', { file: DUMP, out });
  expect(report.path).toBe(out);
  expect(existsSync(out)).toBe(true);
}, 120_000);

test('a bad path, a refused config, a bad limit: tool errors that say what, and the server goes on', async () => {
  const missing = await call('replay', { file: join(tmp, 'missing.pickle') });
  expect(missing).toMatchObject({ isError: true, text: expect.stringMatching(/cannot read .*missing\.pickle: ENOENT/) });
  const refused = await call('explain', { file: DUMP, conf: 'max_split_size_mb:1' });
  expect(refused).toMatchObject({ isError: true, text: expect.stringMatching(/max_split_size_mb too small, must be >= 20 \(got 1\)/) });
  const notSnapshot = await call('summarize', { file: 'package.json' });
  expect(notSnapshot.isError).toBe(true);
  const limit = await call('compare', { baseline: `${J}/rank_0.pickle.gz`, new: `${J}/rank_1.pickle.gz`, category: ['weights'] });
  expect(limit).toMatchObject({ isError: true, text: expect.stringMatching(/CATEGORY:GROWTH/) });
  const oneRecording = await call('predict', { recordings: [{ size: 4, file: `${J}/rank_0.pickle.gz` }], at: 8 });
  expect(oneRecording.isError).toBe(true);
  // Still serving.
  expect((await value('summarize', { file: `${J}/rank_0.pickle.gz` })).requests).toBeGreaterThan(0);
}, 60_000);
