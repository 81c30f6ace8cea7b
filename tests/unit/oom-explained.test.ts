// splitscope explain on real recordings: each OOM dump gets a fix whose replay avoids the OOM within
// what the recording covers (said in those words), each setting fix as `replay --conf` replays it; the
// categories, steps and held segments in JSON; and a planted leak (a real recording whose per-step
// input is never freed again) named with its site and growth per step, the fix that frees it listed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { categorize, Category } from '../../src/trace/categories/categories';
import { stepStarts } from '../../src/trace/categories/steps';
import { replay } from '../../src/trace/replay/replay';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { exportSnapshot } from '../../src/trace/replay/snapshot-export';
import { decodeSnapshotForReplay, encodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { editStream } from '../../src/trace/stream/stream-edit';

const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/splitscope.mjs', ...args], { encoding: 'utf8' });
const json = (...args: string[]) => {
  const r = cli(...args, '--json');
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

beforeAll(() => {
  expect(spawnSync(process.execPath, ['scripts/build-cli.mjs']).status).toBe(0);
});

// ../shared/traces-real's OOM dumps (copied into tests/fixtures/real, as CI's clone has no ../shared) and the ViT's.
const DUMPS = ['tests/fixtures/real/oom__default.pickle.gz', 'tests/fixtures/real/oom__max_split_size_mb=128.pickle.gz', 'tests/fixtures/real/vit_oom__default.pickle.gz'];

describe('explain on OOM dumps', () => {
  test.each(DUMPS)('%s: the OOM, what the memory was, and a fix that avoids it as far as the recording reaches', (file) => {
    const e = json('explain', file);
    const replayed = json('replay', file);
    expect(e.moment).toMatchObject({ kind: 'oom', request: replayed.ooms[0].request });
    expect(Object.keys(e.categories)).toEqual(['at_moment', 'at_peak', 'at_end', 'max']);
    expect(e.categories.at_moment.activation).toBeGreaterThan(0);
    const fix = e.fixes[0];
    expect(fix.result.first_oom_request).toBeNull();
    expect(fix.outcome).toMatch(/^no OOM through request [\d,]+, where the recording ends$/);
    // Every setting fix replays as `replay --conf` replays it.
    for (const f of e.fixes.filter((x: { kind: string }) => x.kind === 'setting')) {
      const conf = f.change.replace('PYTORCH_CUDA_ALLOC_CONF=', '');
      const r = json('replay', file, '--conf', conf, '--addresses', 'simulated');
      expect([conf, r.ooms[0]?.request ?? null, r.stats['reserved_bytes.all.peak']]).toEqual([conf, f.result.first_oom_request, f.result['reserved_bytes.all.peak']]);
    }
    expect(cli('explain', file).stdout).toMatch(/The OOM: request [\d,]+ asked for .*\n {2}CUDA out of memory/);
  });

  test('a run with no OOM: its peak, and fixes that lower it', () => {
    const e = json('explain', 'tests/fixtures/real/resnet__default.pickle.gz');
    expect(e.moment.kind).toBe('peak');
    expect(e.steps.length).toBe(14);
    expect(e.leaks).toEqual([]);
    for (const f of e.fixes) expect(f.outcome).toMatch(/^no OOM, .* less reserved at the peak$/);
  });
});

test('a planted leak: the site, its growth per step, and the fix that frees it', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'splitscope-leak-'));
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync('tests/fixtures/real/resnet__default.pickle.gz'), { gunzip: nodeGunzip, details: true });
  const plan = planSnapshotReplay(snapshot, { trace: traces[0]! });
  const { stream } = plan;
  const details = traces[0]!.details!;
  // The program's per-step input (x, y made in its loop) kept in a list: their frees never come.
  const categories = categorize(stream, details);
  const starts = stepStarts(categories);
  const kept = new Set<number>();
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && categories.of[stream.id[i]!] === Category.input && i > starts[1]!) kept.add(stream.id[i]!);
  const drop = new Set<number>();
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] !== RequestKind.alloc && kept.has(stream.id[i]!)) drop.add(i);
  const leaked = editStream(stream, { drop }).stream;
  const file = join(tmp, 'leak.pickle');
  const run = replay(leaked, { ...plan.replayOptions, addresses: 'simulated', keepEvents: true });
  writeFileSync(file, encodeSnapshotFile(exportSnapshot(run, leaked, { config: plan.config, sourceDetails: details }), 'pickle'));

  const e = json('explain', file);
  expect(e.leaks.length).toBe(1);
  const leak = e.leaks[0];
  expect(leak.site).toMatch(/^w_resnet .*:\d+$/);
  expect(leak.category).toBe('other'); // input no more: never freed
  // Two tensors a step (x and y), their bytes per step the mean over the steps after the first.
  expect(leak.blocks_per_step).toBeCloseTo(2, 0);
  let bytes = 0;
  for (const id of kept) for (let i = 0; i < stream.length; i++) if (stream.id[i] === id && stream.kind[i] === RequestKind.alloc) bytes += stream.size[i]!;
  expect(leak.bytes_per_step).toBeGreaterThan(0);
  expect(leak.bytes_per_step * (starts.length - 2)).toBeLessThanOrEqual(bytes);
  // Under a cap between the program's peak allocated with and without the leak it runs out of memory;
  // freeing the site at the end of each step is a fix.
  const peak = (s: typeof stream) => replay(s, { ...plan.replayOptions, addresses: 'simulated', statsOnly: true }).stats['allocated_bytes.all.peak']!;
  const cap = Math.round((peak(stream) + peak(leaked)) / 2);
  const capped = json('explain', file, '--capacity', String(cap));
  expect(capped.moment.kind).toBe('oom');
  expect(capped.fixes.some((f: { kind: string; change: string }) => f.kind === 'free_earlier' && f.change.includes(leak.site))).toBe(true);
  expect(cli('explain', file).stdout).toMatch(new RegExp(`Suspected leak: \\+[\\d.]+ [MG]iB a step from w_resnet`));
}, 60_000);
