// decodeSnapshotBlob (a file read as a stream in the page) and the CLI's inflating stream give what
// decodeSnapshotForReplay gives for the same bytes held whole: the same snapshot and trace columns,
// and for a bad file the same message.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../src/lib/import-error';
import { writePickle } from '../../src/trace/pickle/pickle-writer';
import { inflatingStream } from '../../src/cli/inflating-stream';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { isGzip } from '../../src/lib/gzip-frame';
import { decodeSnapshotBlob } from '../../src/trace/snapshot/snapshot-blob';
import { decodeSnapshotStream } from '../../src/trace/snapshot/snapshot-stream';
import { decodeSnapshotForReplay, encodeSnapshotFile, type DecodeSnapshotOptions, type SnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';

const FIXTURES = join(__dirname, '../fixtures');
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));
const blob = (bytes: Uint8Array): Blob => new Blob([bytes as Uint8Array<ArrayBuffer>]);

type Outcome = SnapshotForReplay | string;

/** A and b alike, the traces' typed columns compared byte for byte (a deep toEqual of millions of
 * numbers takes most of a minute). */
function expectSame(a: Outcome, b: Outcome): void {
  if (typeof a === 'string' || typeof b === 'string') return void expect(a).toBe(b);
  const bytes = (v: ArrayBufferView): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  const split = (o: SnapshotForReplay) => ({
    rest: { ...o, traces: o.traces.map(({ action: _a, addr: _b, size: _c, stream: _d, flags: _e, details, ...t }) => ({ ...t, details: details && { ...details, time: null, frames: null } })) },
    columns: o.traces.flatMap((t) => [t.action, t.addr, t.size, t.stream, t.flags, ...(t.details ? [t.details.time, t.details.frames] : [])]),
  });
  const x = split(a);
  const y = split(b);
  expect(x.rest).toEqual(y.rest);
  expect(x.columns.length).toBe(y.columns.length);
  x.columns.forEach((c, i) => expect(bytes(c).equals(bytes(y.columns[i]!))).toBe(true));
}

async function streamed(bytes: Uint8Array, options: DecodeSnapshotOptions = {}): Promise<Outcome> {
  try {
    return await decodeSnapshotBlob(blob(bytes), options);
  } catch (e) {
    if (e instanceof ImportError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

/** As the CLI reads a gzip file (src/cli/inflating-stream.ts), with Node's zlib for the whole-file read too. */
async function inflated(gz: Uint8Array, options: DecodeSnapshotOptions = {}): Promise<Outcome> {
  try {
    return await decodeSnapshotStream(inflatingStream(gz), { ...options, gunzip: nodeGunzip });
  } catch (e) {
    if (e instanceof ImportError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

function whole(bytes: Uint8Array, options: DecodeSnapshotOptions = {}): Outcome {
  try {
    return decodeSnapshotForReplay(bytes, options);
  } catch (e) {
    if (e instanceof ImportError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

describe('decodeSnapshotBlob', () => {
  // The two large traces span several windows of the chunked reader; the others have private pools,
  // deferred frees, a ring buffer, an OOM, expandable segments.
  const files = [
    'train_gpt2-n150__default.pickle.gz',
    'random-s3__default.pickle.gz',
    'train_gpt2-n12__default.pickle.gz',
    'real/compiled__default.pickle.gz',
    'real/prefetch__default.pickle.gz',
    'real/ring__default.pickle.gz',
    'real/oom__default.pickle.gz',
    'transformer-s1__expandable_segments=True.pickle.gz',
  ];
  for (const name of files) {
    it(`reads ${name} as decodeSnapshotForReplay does, gzip-compressed and not, with details and without`, async () => {
      const gz = fixture(name);
      const raw = gunzipSync(gz);
      for (const details of [true, false]) {
        const expected = whole(raw, { details });
        expectSame(await streamed(gz, { details }), expected);
        expectSame(await streamed(raw, { details }), expected);
        expectSame(await inflated(gz, { details }), expected);
      }
    }, 60_000);
  }

  it('reads JSON, and reports progress rising to 1', async () => {
    const raw = gunzipSync(fixture('train_gpt2-n12__default.pickle.gz'));
    const asJson = encodeSnapshotFile(decodeSnapshotForReplay(raw).snapshot, 'json');
    expectSame(await streamed(asJson), whole(asJson));
    const seen: number[] = [];
    await decodeSnapshotBlob(blob(raw), { onProgress: (f) => seen.push(f) });
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(1);
    expect(seen.every((f, i) => i === 0 || f >= seen[i - 1]!)).toBe(true);
  });

  it('gives the same message as the whole-file read for every kind of bad file', async () => {
    const gz = fixture('train_gpt2-n12__default.pickle.gz');
    const raw = gunzipSync(gz);
    const damaged = gz.slice();
    for (let i = 100; i < 200; i++) damaged[i] = 0xff;
    const bomb = new Uint8Array(20 << 20);
    bomb.set([0x80, 0x04]);
    const lying = gzipSync(bomb, { level: 1 });
    lying.set([0, 4, 0, 0], lying.length - 4);
    const evil = new TextEncoder().encode("cos\nsystem\n(S'echo hi'\ntR.");
    const cases: [string, Uint8Array, DecodeSnapshotOptions?][] = [
      ['a cut-off gzip', gz.subarray(0, gz.length >> 1)],
      ['a gzip of 10 bytes', gz.subarray(0, 10)],
      ['a cut-off pickle', raw.subarray(0, raw.length - 100)],
      ['a whole gzip of a cut-off pickle', gzipSync(raw.subarray(0, 5000))],
      ['damaged gzip data', damaged],
      ['a gzip bomb whose trailer lies', lying, { maxBytes: 8 << 20 }],
      ['a gzip of zeros', gzipSync(new Uint8Array(1 << 20))],
      ['a pickle too large', raw, { maxBytes: 1 << 20 }],
      ['a pickle that runs code', evil],
      ['a gzip of a pickle that runs code', gzipSync(evil)],
      ['a pickle that is not a snapshot', writePickle({ model: 'gpt2', epoch: 3 })],
      ['an empty file', new Uint8Array(0)],
      ['text', new TextEncoder().encode('hello world')],
      ['bad JSON', new TextEncoder().encode('{"segments": [')],
    ];
    for (const [what, bytes, options] of cases) {
      const expected = whole(bytes, options);
      expect(typeof expected, what).toBe('string');
      expect(await streamed(bytes, options), what).toBe(expected);
      if (isGzip(bytes)) expect(await inflated(bytes, options), `${what}, as the CLI reads it`).toBe(whole(bytes, { ...options, gunzip: nodeGunzip }));
    }
  });
});
