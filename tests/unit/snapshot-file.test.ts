import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../src/lib/import-error';
import { readPickle, type PickleDict } from '../../src/trace/pickle/pickle-reader';
import { tuple, writePickle, type PickleWritable } from '../../src/trace/pickle/pickle-writer';
import type { Snapshot } from '../../src/trace/snapshot/snapshot';
import { decodeSnapshotFile, encodeSnapshotFile, toSnapshot } from '../../src/trace/snapshot/snapshot-file';

const FIXTURES = join(__dirname, '../fixtures');
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));
const GPT2 = 'train_gpt2-n12__default.pickle.gz';
const TRANSFORMER = 'transformer-s1__default.pickle.gz';

function importError(fn: () => unknown): ImportError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ImportError) return e;
    throw e;
  }
  throw new Error('expected an ImportError, but nothing was thrown');
}

const json = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

/** A minimal valid snapshot, as a plain value to break in each test. */
function minimal(): Record<string, unknown> {
  return {
    segments: [
      {
        device: 0,
        address: 1 << 30,
        total_size: 2097152,
        allocated_size: 512,
        active_size: 512,
        requested_size: 500,
        stream: 0,
        segment_type: 'small',
        segment_pool_id: [0, 0],
        is_expandable: false,
        frames: [],
        blocks: [
          { address: 1 << 30, size: 512, requested_size: 500, state: 'active_allocated', frames: [] },
          { address: (1 << 30) + 512, size: 2097152 - 512, requested_size: 0, state: 'inactive', frames: [] },
        ],
      },
    ],
    device_traces: [
      [
        { action: 'segment_alloc', addr: 1 << 30, size: 2097152, stream: 0, time_us: 1 },
        { action: 'alloc', addr: 1 << 30, size: 512, stream: 0, time_us: 2, frames: [{ name: 'f', filename: 'a.py', line: 3 }] },
        { action: 'oom', device_free: 1024, size: 1 << 40, stream: 0, time_us: 3 },
      ],
    ],
    allocator_settings: { PYTORCH_CUDA_ALLOC_CONF: '', max_split_size: -1, roundup_power2_divisions: { '1': 0 } },
  };
}

describe('decodeSnapshotFile: real snapshots', () => {
  const gpt2 = decodeSnapshotFile(fixture(GPT2));

  it('reads train_gpt2-n12 (gzip-compressed pickle)', () => {
    expect(gpt2.segments).toHaveLength(226);
    expect(gpt2.device_traces).toHaveLength(1);
    expect(gpt2.device_traces[0]).toHaveLength(38328);
    expect(gpt2.device_traces[0]![0]).toEqual({
      action: 'alloc',
      addr: 139795368470528,
      size: 6144,
      stream: 0,
      time_us: 1795950515381862,
      compile_context: 'N/A',
      user_metadata: '',
      frames: [
        { name: 'gpt2_one', filename: 'record_traces.py', line: 180 },
        { name: '<module>', filename: 'record_traces.py', line: 200 },
      ],
    });
    const s0 = gpt2.segments[0]!;
    expect(s0).toMatchObject({
      device: 0,
      address: 139778133590016,
      total_size: 1249902592,
      segment_type: 'large',
      segment_pool_id: [0, 0],
      is_expandable: false,
    });
    expect(s0.blocks[0]).toEqual({
      address: 139778133590016,
      size: 1249902592,
      requested_size: 937192536,
      state: 'inactive',
      frames: [],
    });
    expect(gpt2.allocator_settings).toMatchObject({ max_split_size: -1, expandable_segments: false });
    expect(gpt2.allocator_settings!.roundup_power2_divisions!['1024']).toBe(0);
    expect(gpt2.external_annotations![0]).toMatchObject({ stage: 'START', name: 'Optimizer.step#AdamW.step' });
  });

  it('reads the same snapshot uncompressed', () => {
    expect(decodeSnapshotFile(gunzipSync(fixture(GPT2)))).toEqual(gpt2);
  });

  it('reads the JSON form to the same Snapshot, gzip-compressed or not', () => {
    // transformer-s1: JSON repeats every frame list in full, and gpt2's would be 100 MB.
    const transformer = decodeSnapshotFile(fixture(TRANSFORMER));
    const text = encodeSnapshotFile(transformer, 'json');
    expect(text[0]).toBe('{'.charCodeAt(0));
    expect(decodeSnapshotFile(text)).toEqual(transformer);
    expect(decodeSnapshotFile(gzipSync(text))).toEqual(transformer);
    // Leading white space and a byte order mark are fine.
    const padded = new Uint8Array(text.length + 5);
    padded.set([0xef, 0xbb, 0xbf, 0x20, 0x0a]);
    padded.set(text, 5);
    expect(decodeSnapshotFile(padded)).toEqual(transformer);
  });

  it('round-trips through encodeSnapshotFile as a pickle', () => {
    const transformer = decodeSnapshotFile(fixture(TRANSFORMER));
    expect(transformer.segments).toHaveLength(45);
    const pickle = encodeSnapshotFile(transformer, 'pickle');
    expect(pickle[0]).toBe(0x80);
    expect(decodeSnapshotFile(pickle)).toEqual(transformer);
    expect(decodeSnapshotFile(encodeSnapshotFile(gpt2, 'pickle'))).toEqual(gpt2);
  });

  it('reports rising progress ending at 1', () => {
    const seen: number[] = [];
    decodeSnapshotFile(fixture(GPT2), { onProgress: (f) => seen.push(f) });
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
  });
});

describe('decodeSnapshotFile: shapes', () => {
  it('accepts a minimal snapshot, gives oom entries addr 0, and writes them back without it', () => {
    const s = decodeSnapshotFile(json(minimal()));
    expect(s.device_traces[0]![2]).toEqual({ action: 'oom', addr: 0, device_free: 1024, size: 1 << 40, stream: 0, time_us: 3 });
    const back = readPickle(encodeSnapshotFile(s, 'pickle')) as PickleDict;
    const oom = (back.device_traces as PickleDict[][])[0]![2]!;
    expect(Object.keys(oom)).not.toContain('addr');
    expect(decodeSnapshotFile(encodeSnapshotFile(s, 'pickle'))).toEqual(s);
  });

  it('accepts snapshots without device_traces or allocator_settings, and a bare segment list', () => {
    const m = minimal();
    delete m.device_traces;
    delete m.allocator_settings;
    const s = decodeSnapshotFile(json(m));
    expect(s.device_traces).toEqual([]);
    expect(s.allocator_settings).toBeUndefined();
    expect(decodeSnapshotFile(json(minimal().segments)).segments).toHaveLength(1);
  });

  it('fills fields that older PyTorch versions leave out', () => {
    const s = decodeSnapshotFile(
      json({
        segments: [{ address: 4096, total_size: 2097152, blocks: [{ size: 1024, state: 'active_allocated' }, { size: 2096128, state: 'inactive' }] }],
        device_traces: [[{ action: 'alloc', addr: 4096, size: 1000 }]],
      }),
    );
    expect(s.segments[0]).toEqual({
      address: 4096,
      total_size: 2097152,
      device: 0,
      stream: 0,
      allocated_size: 1024,
      active_size: 1024,
      requested_size: 1024,
      segment_type: 'small',
      is_expandable: false,
      blocks: [
        { size: 1024, address: 4096, requested_size: 1024, state: 'active_allocated' },
        { size: 2096128, address: 5120, requested_size: 2096128, state: 'inactive' },
      ],
    });
    expect(s.device_traces[0]![0]!.stream).toBe(0);
  });

  const broken: [string, (m: Record<string, any>) => void, RegExp][] = [
    ['an address of the wrong type', (m) => (m.device_traces[0][1].addr = '0x40000000'),
      /device_traces\[0\]\[1\]\.addr should be an integer, got string "0x40000000"/],
    ['a fractional size', (m) => (m.device_traces[0][0].size = 1.5), /device_traces\[0\]\[0\]\.size should be an integer, got number 1\.5/],
    ['an action that is not a string', (m) => (m.device_traces[0][0].action = 7), /device_traces\[0\]\[0\]\.action should be one of alloc, .*got number 7/],
    ['a missing size', (m) => delete m.device_traces[0][1].size, /device_traces\[0\]\[1\]\.size should be an integer, got nothing/],
    ['a frame without a line', (m) => delete m.device_traces[0][1].frames[0].line, /device_traces\[0\]\[1\]\.frames\[0\]\.line should be an integer/],
    ['a trace that is not a list', (m) => (m.device_traces[0] = {}), /device_traces\[0\] should be a list of trace entries, got a dict/],
    ['a bad block state', (m) => (m.segments[0].blocks[1].state = 'free'), /segments\[0\]\.blocks\[1\]\.state should be one of active_allocated/],
    ['a segment without total_size', (m) => delete m.segments[0].total_size, /segments\[0\]\.total_size should be an integer, got nothing/],
    ['a bad segment type', (m) => (m.segments[0].segment_type = 'huge'), /segments\[0\]\.segment_type should be 'large' or 'small'/],
    ['a bad pool id', (m) => (m.segments[0].segment_pool_id = [0]), /segments\[0\]\.segment_pool_id should be a pair of integers, got a list of 1/],
    ['settings of the wrong type', (m) => (m.allocator_settings.max_split_size = 'big'), /allocator_settings\.max_split_size should be a number/],
  ];
  for (const [what, breakIt, message] of broken) {
    it(`names the path of ${what}`, () => {
      const m = minimal();
      breakIt(m);
      const e = importError(() => decodeSnapshotFile(json(m)));
      expect(e.code).toBe('bad-shape');
      expect(e.message).toMatch(message);
      expect(e.message).toMatch(/^Not a valid memory snapshot: /);
    });
  }

  it('refuses addresses beyond 2^53 with a clear message', () => {
    const m = minimal() as Record<string, any>;
    m.device_traces[0][1].addr = 2n ** 64n - 4096n;
    m.segments[0].segment_pool_id = tuple(0, 0);
    const e = importError(() => decodeSnapshotFile(writePickle(m as PickleWritable)));
    expect(e.code).toBe('bad-shape');
    expect(e.message).toContain('device_traces[0][1].addr is 18446744073709547520, beyond 2^53');
  });

  it('says what a pickle or JSON that is not a snapshot holds', () => {
    const list = importError(() => decodeSnapshotFile(writePickle({ model: 'gpt2', epoch: 3 })));
    expect(list.code).toBe('not-a-snapshot');
    expect(list.message).toContain("keys 'model', 'epoch' but no 'segments' list");
    expect(importError(() => decodeSnapshotFile(json(42))).code).toBe('not-a-snapshot');
    expect(importError(() => decodeSnapshotFile(writePickle('hello'))).message).toContain('holds string "hello"');
  });

  it('lets toSnapshot check values parsed elsewhere', () => {
    expect(toSnapshot(JSON.parse(new TextDecoder().decode(json(minimal())))).segments).toHaveLength(1);
  });
});

describe('decodeSnapshotFile: bad files', () => {
  it('refuses files that are neither pickle nor JSON', () => {
    for (const input of [new TextEncoder().encode('hello world'), new Uint8Array([0x89, 0x50, 0x4e, 0x47]), new Uint8Array(0)]) {
      const e = importError(() => decodeSnapshotFile(input));
      expect(e.code).toBe('not-a-snapshot');
      expect(e.message).toMatch(/^This is not a PyTorch memory snapshot: expected a pickle from torch\.cuda\.memory\._dump_snapshot, gzip-compressed or not, or the same structure as JSON\./);
    }
  });

  it('reports bad JSON', () => {
    const e = importError(() => decodeSnapshotFile(new TextEncoder().encode('{"segments": [')));
    expect(e.code).toBe('bad-json');
  });

  it('reports a cut-off gzip file or pickle as truncated', () => {
    const gz = fixture(GPT2);
    expect(importError(() => decodeSnapshotFile(gz.subarray(0, gz.length >> 1))).code).toBe('truncated');
    expect(importError(() => decodeSnapshotFile(gz.subarray(0, 10))).code).toBe('truncated');
    const raw = gunzipSync(gz);
    expect(importError(() => decodeSnapshotFile(raw.subarray(0, raw.length - 100))).code).toBe('truncated');
    // A whole gzip member around a cut-off pickle.
    expect(importError(() => decodeSnapshotFile(gzipSync(raw.subarray(0, 5000)))).code).toBe('truncated');
  });

  it('reports damaged gzip data', () => {
    const gz = fixture(GPT2).slice();
    for (let i = 100; i < 200; i++) gz[i] = 0xff;
    const e = importError(() => decodeSnapshotFile(gz));
    expect(['bad-gzip', 'truncated']).toContain(e.code);
  });

  it('stops a gzip bomb at maxBytes, whatever its trailer claims', () => {
    // It starts like a pickle (protocol 4), so that only its size gives it away.
    const data = new Uint8Array(50 << 20);
    data.set([0x80, 0x04]);
    const bomb = gzipSync(data, { level: 1 });
    expect(bomb.length).toBeLessThan(1 << 20);
    const e = importError(() => decodeSnapshotFile(bomb, { maxBytes: 8 << 20 }));
    expect(e.code).toBe('too-large');
    expect(e.message).toMatch(/^The snapshot is too large: it decompresses to more than 8\.0 MiB, over the 8\.0 MiB limit\./);
    // The same data with a trailer that claims 1 KiB: stopped as it inflates.
    const lying = bomb.slice();
    lying.set([0, 4, 0, 0], lying.length - 4);
    const e2 = importError(() => decodeSnapshotFile(lying, { maxBytes: 8 << 20 }));
    expect(e2.code).toBe('too-large');
    expect(e2.message).toMatch(/it decompresses to more than 8\.0 MiB, over the 8\.0 MiB limit/);
  });

  it('refuses a gzip of something else from its first kilobyte, not after inflating it', () => {
    // 50 MiB of zeros: with a 2 GiB limit the whole would be inflated before the parse failed.
    const e = importError(() => decodeSnapshotFile(gzipSync(new Uint8Array(50 << 20), { level: 1 })));
    expect(e.code).toBe('not-a-snapshot');
    expect(e.message).toMatch(/gzip-compressed, but what it holds is neither/);
  });

  it('applies maxBytes to uncompressed input too', () => {
    const e = importError(() => decodeSnapshotFile(gunzipSync(fixture(GPT2)), { maxBytes: 1 << 20 }));
    expect(e.code).toBe('too-large');
  });

  it('refuses a pickle that would run code', () => {
    const evil = new TextEncoder().encode("cos\nsystem\n(S'echo hi'\ntR.");
    expect(importError(() => decodeSnapshotFile(evil)).code).toBe('unsafe-opcode');
    expect(importError(() => decodeSnapshotFile(gzipSync(evil))).code).toBe('unsafe-opcode');
    const stackGlobal = new Uint8Array([0x80, 4, 0x8c, 2, 0x6f, 0x73, 0x8c, 1, 0x73, 0x93, 0x2e]);
    expect(importError(() => decodeSnapshotFile(stackGlobal)).message).toContain("STACK_GLOBAL 'os s'");
  });
});

const hasPython = spawnSync('python3', ['-c', 'import pickle'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!hasPython)('encodeSnapshotFile output in Python', () => {
  it('loads with pickle.loads, equal to the original file, segment_pool_id a tuple', () => {
    const gz = fixture(TRANSFORMER);
    const ours = encodeSnapshotFile(decodeSnapshotFile(gz) as Snapshot, 'pickle');
    const script = `
import sys, gzip, pickle
ours = pickle.loads(sys.stdin.buffer.read())
theirs = pickle.load(gzip.open(sys.argv[1]))
print(ours == theirs, type(ours['segments'][0]['segment_pool_id']).__name__)
`;
    const r = spawnSync('python3', ['-c', script, join(FIXTURES, TRANSFORMER)], { input: ours, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('True tuple');
  });
});
