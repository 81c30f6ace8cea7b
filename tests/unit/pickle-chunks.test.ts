// A pickle read in chunks (PickleChunkReader) reads to what readPickle reads from the whole input,
// with the same errors at the same bytes, wherever the chunks and windows fall.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { gunzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../src/lib/import-error';
import { PickleChunkReader, type PickleChunkOptions } from '../../src/trace/pickle/pickle-chunks';
import { readPickle, type PickleValue } from '../../src/trace/pickle/pickle-reader';

const fixture = (path: string): Uint8Array => {
  const bytes = new Uint8Array(readFileSync(join(__dirname, '../fixtures', path)));
  return path.endsWith('.gz') ? gunzipSync(bytes) : bytes;
};

const PICKLES = [0, 1, 2, 3, 4, 5].map((p) => `pickle/protocol-${p}.pickle`).concat([
  'pickle/snapshot-small-protocol-2.pickle',
  'pickle/snapshot-small-protocol-4.pickle',
  'train_gpt2-n12__default.pickle.gz',
  'real/compiled__default.pickle.gz',
]);

/** `bytes` pushed in chunks of the sizes `sizes` cycles through, read in small windows. */
function readChunked(bytes: Uint8Array, sizes: readonly number[], options: PickleChunkOptions = {}): PickleValue {
  const reader = new PickleChunkReader(bytes.length, { windowBytes: 2048, windowMargin: 300, ...options });
  for (let pos = 0, k = 0; pos < bytes.length; k++) {
    const end = Math.min(bytes.length, pos + sizes[k % sizes.length]!);
    reader.push(bytes.slice(pos, end));
    pos = end;
  }
  return reader.end();
}

/** What a read throws: the ImportError's message, or the value's absence. */
function outcome(read: () => PickleValue): string {
  try {
    read();
    return 'read';
  } catch (e) {
    if (e instanceof ImportError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

describe('PickleChunkReader', () => {
  for (const name of PICKLES) {
    it(`reads ${name} in chunks to what readPickle reads`, () => {
      const bytes = fixture(name);
      const whole = readPickle(bytes);
      expect(readChunked(bytes, [1, 7, 4096, 300, 65536])).toEqual(whole);
      expect(readChunked(bytes, [bytes.length])).toEqual(whole);
      // Chunks large next to the margin: carried-over bytes are joined to each chunk's start.
      expect(readChunked(bytes, [5000])).toEqual(whole);
    });
  }

  it('reads the same wherever chunks and windows fall', () => {
    const bytes = fixture('pickle/snapshot-small-protocol-4.pickle');
    const whole = readPickle(bytes);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 1, maxLength: 8 }), fc.integer({ min: 257, max: 2000 }), fc.integer({ min: 600, max: 6000 }), (sizes, margin, window) => {
        expect(readChunked(bytes, sizes, { windowMargin: margin, windowBytes: window })).toEqual(whole);
      }),
      { numRuns: 150 },
    );
  });

  it('reports a cut-off file as readPickle does, at the same byte', () => {
    const bytes = fixture('pickle/protocol-0.pickle').subarray(0, 3000);
    const small = fixture('pickle/snapshot-small-protocol-4.pickle');
    for (const input of [bytes, small]) {
      for (let cut = 0; cut < input.length; cut += 37) {
        const part = input.subarray(0, cut);
        expect(outcome(() => readChunked(part, [113, 5]))).toBe(outcome(() => readPickle(part)));
      }
    }
  });

  it('reports damage and code as readPickle does, at the same byte', () => {
    const base = fixture('pickle/snapshot-small-protocol-4.pickle');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: base.length - 1 }), fc.integer({ min: 0, max: 255 }), (at, byte) => {
        const damaged = base.slice();
        damaged[at] = byte;
        expect(outcome(() => readChunked(damaged, [97, 1000]))).toBe(outcome(() => readPickle(damaged)));
      }),
      { numRuns: 300 },
    );
  });

  it('waits for a string longer than a window, and reads past it', () => {
    // A BINUNICODE of 100 kB in a list: it must arrive whole before it is read.
    const text = 'x'.repeat(100_000);
    const body = [0x80, 4, 0x5d, 0x28, 0x58, ...[0xa0, 0x86, 0x01, 0x00], ...Array.from(text, (c) => c.charCodeAt(0)), 0x4b, 7, 0x65, 0x2e];
    const bytes = new Uint8Array(body);
    expect(readChunked(bytes, [1000])).toEqual([text, 7]);
    expect(readChunked(bytes, [3000])).toEqual([text, 7]);
    expect(readChunked(bytes, [60_000])).toEqual([text, 7]);
  });

  it('reports progress over the whole pickle, rising to 1', () => {
    // Progress comes about every 4 MB: a 45 MB pickle.
    const bytes = fixture('train_gpt2-n150__default.pickle.gz');
    const seen: number[] = [];
    readChunked(bytes, [65536], { windowBytes: 1 << 20, windowMargin: 1 << 16, onProgress: (f) => seen.push(f) });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= seen[i - 1]!))).toBe(true);
    expect(seen.at(-1)).toBe(1);
  });
});
