// splitscope check, the memory regression gate, on real recording pairs (tests/fixtures/job: one
// Llama training job at batches 4, 8 and 12, and at batch 8 again with annotations): a change that
// grows activations fails its limits, the unchanged job passes, a change that adds an OOM under a cap
// fails --no-new-oom; every output format (text, JSON, JUnit XML read back with a JUnit reader, GitHub
// Actions annotations, Markdown); a limit typed wrong is a usage error.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'junit2json';
import { beforeAll, describe, expect, test } from 'vitest';

const J = 'tests/fixtures/job';
const [B4, B8, B12, B8_AGAIN] = [`${J}/rank_0.pickle.gz`, `${J}/rank_1.pickle.gz`, `${J}/rank_2.pickle.gz`, `${J}/annotated.pickle.gz`];
const tmp = mkdtempSync(join(tmpdir(), 'splitscope-check-'));
const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['bin/splitscope.mjs', 'check', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_ACTIONS: '', ...env } });

beforeAll(() => {
  expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
});

describe('splitscope check', () => {
  test('a change that grows activations: the limits it passes say so, exit 1, and what grew', () => {
    const r = cli([B4, B8, '--max-peak-reserved', '+5%', '--category', 'activation:+10%', '--category', 'parameters:+0%', '--json']);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.passed).toBe(false);
    expect(out.limits.map((l: { name: string; passed: boolean }) => [l.name, l.passed])).toEqual([
      ['peak reserved', false],
      ['activations', false],
      ['parameters', true], // the same model
    ]);
    const act = out.limits[1];
    expect(act.new).toBe(out.new.categories.max.activation);
    expect(act.new / act.baseline).toBeGreaterThan(1.5);
    expect(out.new['reserved_bytes.all.peak']).toBe(JSON.parse(spawnSync(process.execPath, ['bin/splitscope.mjs', 'replay', B8, '--json'], { encoding: 'utf8' }).stdout).stats['reserved_bytes.all.peak']);
    expect(out.sites[0].new).toBeGreaterThan(out.sites[0].baseline);
    expect(cli([B4, B8, '--category', 'activation:+10%']).stdout).toMatch(/FAIL {2}activations [\d.]+ MiB -> [\d.]+ MiB \(\+\d+\.\d%\); past the limit \+10%/);
  });

  test('the unchanged job passes, exit 0; with no limits it only reports', () => {
    const r = cli([B8, B8_AGAIN, '--max-peak-reserved', '+5%', '--max-peak-allocated', '+3%', '--no-new-oom']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\npassed$/m);
    const none = cli([B4, B8]);
    expect(none.status).toBe(0);
    expect(none.stdout).toMatch(/no limits given/);
  });

  test('a change that adds an OOM under a cap fails --no-new-oom; with --conf both replay under it', () => {
    const r = cli([B4, B12, '--capacity', '1GiB', '--no-new-oom', '--json']);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.baseline.num_ooms).toBe(0);
    expect(out.new.first_oom_request).toBeGreaterThan(0);
    expect(out.limits[0]).toMatchObject({ name: 'no new OOM', passed: false });
    // Under expandable segments both, their configs written back.
    const e = JSON.parse(cli([B4, B12, '--conf', 'expandable_segments:True', '--json']).stdout);
    expect([e.baseline.conf, e.new.conf]).toEqual(['expandable_segments:True', 'expandable_segments:True']);
  });

  test('JUnit XML (read back with a JUnit reader), GitHub Actions annotations, Markdown', async () => {
    const junit = join(tmp, 'check.xml');
    const markdown = join(tmp, 'check.md');
    const r = cli([B4, B8, '--max-peak-reserved', '+5%', '--category', 'parameter:+1%', '--no-new-oom', '--junit', junit, '--markdown', markdown], { GITHUB_ACTIONS: 'true' });
    expect(r.status).toBe(1);
    const report = (await parse(readFileSync(junit, 'utf8'))) as { tests: number; failures: number; testsuite: { testcase: { name: string; failure?: { message: string }[] }[] }[] };
    expect([report.tests, report.failures]).toEqual([3, 1]);
    const cases = report.testsuite[0]!.testcase;
    expect(cases.map((c) => c.name)).toEqual(['peak reserved +5%', 'parameters +1%', 'no new OOM none']);
    expect(cases[0]!.failure![0]!.message).toMatch(/^peak reserved .* past the limit \+5%/);
    expect(cases[1]!.failure).toBeUndefined();
    // One ::error:: workflow command per broken limit, in GitHub's syntax.
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::'));
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toMatch(/^::error title=splitscope check%3A peak reserved::peak reserved [\d.]+ MiB -> [\d.]+ GiB \(\+\d+\.\d%25\); past the limit \+5%25/);
    const md = readFileSync(markdown, 'utf8');
    expect(md).toMatch(/^### splitscope check: ❌ 1 of 3 limits broken\n/);
    expect(md).toMatch(/\| ❌ peak reserved \| \+5% \| peak reserved/);
    expect(md).toMatch(/\| peak allocated \| [\d.]+ MiB \| [\d.]+ MiB \| \+[\d.]+ MiB \(\+\d+\.\d%\) \|/);
    // Passing: a notice, no error.
    expect(cli([B8, B8_AGAIN, '--no-new-oom'], { GITHUB_ACTIONS: 'true' }).stdout).toMatch(/^::notice title=splitscope check::all 1 memory limits hold$/m);
  });

  test('mistakes are usage errors (exit 2), named', () => {
    expect(cli([B4])).toMatchObject({ status: 2, stderr: expect.stringMatching(/check takes two files: BASELINE NEW/) });
    expect(cli([B4, B8, '--category', 'weights+5%'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--category takes CATEGORY:GROWTH/) });
    expect(cli([B4, B8, '--max-peak-reserved', 'lots'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--max-peak-reserved takes the growth allowed/) });
    expect(cli([B4, 'nope.pickle'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/cannot read nope\.pickle/) });
  });
});
