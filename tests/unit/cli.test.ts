// The CLI as a user runs it (bin/splitscope.mjs over the bundle that `npm ci` builds).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';

const FIXTURE = 'tests/fixtures/transformer-s1__default.pickle.gz';
const tmp = mkdtempSync(join(tmpdir(), 'splitscope-cli-'));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['bin/splitscope.mjs', ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(() => {
  const built = spawnSync(process.execPath, ['scripts/build-cli.mjs'], { encoding: 'utf8' });
  expect(built.status).toBe(0);
});

describe('splitscope replay', () => {
  test('piped into a reader that stops early (head, or one that reads nothing), it stops quietly', () => {
    const sizes = 'tests/fixtures/sizes';
    const predict = `"${process.execPath}" bin/splitscope.mjs predict 16:${sizes}/resnet-16__default.pickle.gz 32:${sizes}/resnet-32__default.pickle.gz --at 45`;
    const r = spawnSync('sh', ['-c', `${predict} | true`], { encoding: 'utf8' });
    expect(r.stderr).toBe(''); // not Node's "Unhandled 'error' event ... EPIPE"
    const head = spawnSync('sh', ['-c', `"${process.execPath}" bin/splitscope.mjs replay ${FIXTURE} | head -1`], { encoding: 'utf8' });
    expect([head.stdout.split('\n')[0], head.stderr]).toEqual([expect.stringMatching(/^config:/), '']);
  });

  test('--json prints exactly one object with stats and OOMs, and OOMs still exit 0', () => {
    const r = cli('replay', FIXTURE, '--conf', 'roundup_power2_divisions:4', '--capacity', '6GiB', '--json');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out);
    expect(Object.keys(result)).toEqual(['stats', 'ooms', 'caught_ooms', 'categories', 'notes']);
    expect(result.caught_ooms).toEqual([]); // no cuDNN workspace (and no C++ frames to name one)
    // Requested bytes by category (trace/categories), up to the first OOM: at most what was allocated.
    expect(Object.keys(result.categories)).toEqual(['at_peak', 'at_end', 'max', 'peak_request']);
    expect(Object.keys(result.categories.at_peak)).toEqual(['parameter', 'gradient', 'optimizer_state', 'activation', 'temporary', 'input', 'other']);
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    expect(sum(result.categories.at_peak)).toBeLessThanOrEqual(result.stats['allocated_bytes.all.peak']);
    expect(result.categories.peak_request).toBeLessThanOrEqual(result.ooms[0].request);
    expect(result.stats['num_ooms']).toBe(15); // as the recording under that config had
    expect(result.ooms).toHaveLength(15);
    expect(result.ooms[0]).toMatchObject({ size: 671088640 });
    expect(result.ooms[0].message).toMatch(/^CUDA out of memory\. Tried to allocate 640\.00 MiB\. GPU 0 .* 6\.00 GiB allowed;/);
  });

  test('the human output names the config, addresses and stats', () => {
    const r = cli('replay', FIXTURE, '--capacity', '6442450944');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/addresses: recorded/);
    expect(r.out).toMatch(/reserved_bytes\.all\.peak\s+\d+/);
  });

  test('--out writes a snapshot that reads back, as pickle and as JSON, gzip-compressed where the name ends .gz', () => {
    for (const name of ['out.pickle', 'out.json', 'out.json.gz']) {
      const out = join(tmp, name);
      expect(cli('replay', FIXTURE, '--conf', 'max_split_size_mb:128', '--capacity', '6GiB', '--out', out).code).toBe(0);
      const bytes = readFileSync(out);
      expect(bytes[0] === 0x1f && bytes[1] === 0x8b).toBe(name.endsWith('.gz'));
      if (name.endsWith('.json.gz')) expect(JSON.parse(gunzipSync(bytes).toString('utf8')).device_traces).toBeInstanceOf(Array);
      const snap = decodeSnapshotFile(bytes);
      const trace = snap.device_traces[0]!;
      expect(trace.length).toBeGreaterThan(30000);
      expect(trace[0]).toMatchObject({ action: 'segment_alloc' });
      expect(snap.allocator_settings?.PYTORCH_CUDA_ALLOC_CONF).toBe('max_split_size_mb:128');
      expect(snap.segments.every((s) => s.blocks.reduce((n, b) => n + b.size, 0) === s.total_size)).toBe(true);
    }
  });

  test('an exported run replays to itself', () => {
    const out = join(tmp, 'self.pickle');
    expect(cli('replay', FIXTURE, '--capacity', '6GiB', '--out', out).code).toBe(0);
    const a = JSON.parse(cli('replay', FIXTURE, '--capacity', '6GiB', '--json').out);
    const b = JSON.parse(cli('replay', out, '--capacity', '6GiB', '--json').out);
    expect(b.stats).toEqual(a.stats);
  });

  test('bad input: one or two clear lines, no stack trace, non-zero exit', () => {
    const junk = join(tmp, 'junk.pickle');
    writeFileSync(junk, Buffer.from('this is not a pickle at all'));
    const cases = [
      cli('replay', junk),
      cli('replay', join(tmp, 'missing.pickle')),
      cli('replay', FIXTURE, '--conf', 'max_split_size_mb:10'),
      cli('replay', FIXTURE, '--capacity', 'lots'),
      cli('replay', FIXTURE, '--frobnicate'),
      cli('replay'),
      cli('fly', FIXTURE),
    ];
    for (const r of cases) {
      expect(r.code).not.toBe(0);
      expect(r.err.trim().split('\n').length).toBeLessThanOrEqual(2);
      expect(r.err).toMatch(/^splitscope: /);
      expect(r.err).not.toMatch(/\n\s+at /);
    }
    expect(cases[0]!.err).toMatch(/not a PyTorch memory snapshot/);
    expect(cases[2]!.err).toMatch(/max_split_size_mb too small, must be >= 20/);
    expect(cases[3]!.err).toMatch(/not a size/);
  });

  test('--device replays another GPU of a snapshot of several, as it was recorded', () => {
    const file = 'tests/fixtures/random-s1+transformer-s1__default__two_devices.pickle.gz';
    const manifest = JSON.parse(readFileSync('tests/fixtures/MANIFEST.json', 'utf8'));
    const recorded = manifest.traces.find((t: { file: string }) => t.file.endsWith('two_devices.pickle.gz'));
    const stats = JSON.parse(cli('replay', file, '--capacity', '6GiB', '--device', '1', '--json').out).stats;
    for (const [key, want] of Object.entries(recorded.stats_at_end_device1)) expect([key, stats[key]]).toEqual([key, want]);
    const missing = cli('replay', file, '--device', '2');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/no trace for device 2/);
  });

  test('--until stops at a request: the stats are those of that moment', () => {
    const first = JSON.parse(cli('replay', FIXTURE, '--capacity', '6GiB', '--until', '0', '--json').out).stats;
    expect(first['allocation.all.current']).toBe(1);
    expect(first['num_device_alloc']).toBe(1);
    expect(cli('replay', FIXTURE, '--until', 'x').err).toMatch(/--until takes a request index/);
  });

  test('under expandable_segments:True it predicts the run recorded with it', () => {
    const r = cli('replay', FIXTURE, '--conf', 'expandable_segments:True', '--capacity', '6GiB', '--json');
    expect(r.code).toBe(0);
    const { stats } = JSON.parse(r.out);
    const manifest = JSON.parse(readFileSync('tests/fixtures/MANIFEST.json', 'utf8'));
    const recorded = manifest.traces.find((t: { file: string }) => t.file === 'transformer-s1__expandable_segments=True.pickle.gz');
    for (const key of ['reserved_bytes.all.peak', 'num_device_alloc', 'num_device_free', 'num_ooms', 'segment.all.peak']) {
      expect([key, stats[key]]).toEqual([key, recorded.stats_at_end[key]]);
    }
  });
});

describe('splitscope sweep --param', () => {
  test('one row per value, each equal to the replay under that config', () => {
    const rows = JSON.parse(cli('sweep', FIXTURE, '--param', 'roundup_power2_divisions', '--values', '0,4', '--capacity', '6GiB', '--json').out);
    expect(rows.map((r: { conf: string }) => r.conf)).toEqual(['', 'roundup_power2_divisions:4']);
    const replay = JSON.parse(cli('replay', FIXTURE, '--conf', 'roundup_power2_divisions:4', '--capacity', '6GiB', '--json').out);
    for (const key of ['reserved_bytes.all.peak', 'num_ooms', 'num_device_alloc']) expect(rows[1][key]).toBe(replay.stats[key]);
    const gc = cli('sweep', FIXTURE, '--param', 'garbage_collection_threshold', '--values', '0.6', '--conf', 'max_split_size_mb:256', '--capacity', '6GiB');
    expect(gc.out).toMatch(/max_split_size_mb:256,garbage_collection_threshold:0.6/);
    expect(cli('sweep', FIXTURE, '--param', 'roundup_power2_divisions', '--values', '3').err).toMatch(/must be a power of two/);
    expect(cli('sweep', FIXTURE, '--param', 'nope', '--values', '1').err).toMatch(/--param must be/);
  });
});

describe('splitscope sweep', () => {
  test('one row per setting, each equal to the replay under that setting', () => {
    const r = cli('sweep', FIXTURE, '--max-split', '32,256,none', '--capacity', '6GiB', '--json');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.out);
    expect(rows.map((x: { max_split_size_mb: number | null }) => x.max_split_size_mb)).toEqual([32, 256, null]);
    const replay = JSON.parse(cli('replay', FIXTURE, '--conf', 'max_split_size_mb:256', '--capacity', '6GiB', '--json').out);
    for (const key of ['reserved_bytes.all.peak', 'num_ooms', 'num_alloc_retries', 'num_device_alloc', 'num_device_free']) {
      expect(rows[1][key]).toBe(replay.stats[key]);
    }
    expect(rows[1].fragmentation_at_peak).toBeGreaterThanOrEqual(0);
    expect(rows[1].largest_free_block_at_peak).toBeGreaterThanOrEqual(0);
    const table = cli('sweep', FIXTURE, '--max-split', '32,none');
    expect(table.out.split('\n').find((l) => !/^(note|warning): /.test(l))).toMatch(/max_split_mb\s+peak reserved/);
  });

  test('needs --max-split', () => {
    const r = cli('sweep', FIXTURE);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--max-split/);
  });
});

describe('splitscope stats', () => {
  test("prints memory_viz's stats text, the pools, the free blocks and the replay's memory_stats", () => {
    const file = 'tests/fixtures/real/compiled__default.pickle.gz';
    const r = cli('stats', file);
    expect(r.code).toBe(0);
    const recorded = JSON.parse(readFileSync('tests/fixtures/memory-viz-stats.json', 'utf8'))['real/compiled__default.pickle.gz'].stdout;
    expect(r.out.startsWith(recorded)).toBe(true);
    expect(r.out).toMatch(/cuda:0\s+\(0, 1\) large/);
    expect(r.out).toMatch(/Free blocks by size/);
    expect(r.out).toMatch(/reserved_bytes\.all\.current\s+\d+/);
    const json = JSON.parse(cli('stats', file, '--json').out);
    expect(Object.keys(json)).toEqual(['segsum', 'pools', 'free_blocks', 'fragmentation', 'stats', 'categories', 'notes']);
    expect(json.categories).toEqual(JSON.parse(cli('replay', file, '--json').out).categories);
    expect(json.stats).toEqual(JSON.parse(cli('replay', file, '--json').out).stats);
  });

  test('bad input: a clear line and a non-zero exit', () => {
    expect(cli('stats', 'tests/fixtures/nope.pickle')).toMatchObject({ code: 2, err: expect.stringMatching(/cannot read tests\/fixtures\/nope\.pickle: no such file/) });
    expect(cli('stats', FIXTURE, '--device', 'x')).toMatchObject({ code: 2, err: expect.stringMatching(/--device takes a device index/) });
    expect(cli('stats', FIXTURE, '--device', '3')).toMatchObject({ code: 2, err: expect.stringMatching(/has no trace for device 3, nor segments/) });
    const bad = join(tmp, 'bad.pickle');
    writeFileSync(bad, 'not a snapshot');
    const r = cli('stats', bad);
    expect(r.code).toBe(2); // an input that cannot be read (1 is check's "a limit broken")
    expect(r.err).not.toMatch(/internal error/);
  });
});

describe('splitscope report and open: bad input', () => {
  test('a wrong config, a file that is no snapshot, a bad port: a clear line and a non-zero exit, no file written', () => {
    expect(spawnSync(process.execPath, ['scripts/build-report.mjs']).status).toBe(0);
    const out = join(tmp, 'never.html');
    const conf = cli('report', FIXTURE, '-o', out, '--conf', 'max_split_size_mb:abc');
    expect(conf.code).toBe(2);
    expect(conf.err).toMatch(/max_split_size_mb/);
    const bad = join(tmp, 'not-a-snapshot.pickle');
    writeFileSync(bad, 'hello');
    expect(cli('report', bad, '-o', out)).toMatchObject({ code: 2, err: expect.stringMatching(/not a PyTorch memory snapshot/) });
    expect(() => readFileSync(out)).toThrow();
    expect(cli('open', FIXTURE, '--port', 'abc')).toMatchObject({ code: 2, err: expect.stringMatching(/--port takes a port number/) });
    expect(cli('open', bad)).toMatchObject({ code: 2, err: expect.stringMatching(/not a PyTorch memory snapshot/) });
  });

  test('a report carries the snapshot, gzip-compressed, and names it', () => {
    const out = join(tmp, 'r.html');
    const r = cli('report', 'tests/fixtures/job/rank_0.pickle.gz', '-o', out);
    expect(r.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    const m = /<script type="application\/octet-stream" id="splitscope-snapshot" data-name="rank_0\.pickle\.gz">([A-Za-z0-9+/=]+)<\/script>/.exec(html);
    expect(m).not.toBeNull();
    expect(Buffer.from(m![1]!, 'base64').equals(readFileSync('tests/fixtures/job/rank_0.pickle.gz'))).toBe(true);
    // Three script elements end (the snapshot, the workers' sources, the page): no text inside ends one early.
    expect(html.match(/<\/script>/gi)!.length).toBe(3);
  });
});
