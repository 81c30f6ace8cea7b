import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readPickle, type PickleValue } from '../../src/trace/pickle/pickle-reader';
import {
  PickleTuple,
  tuple,
  unsharedItems,
  writePickle,
  type PickleWritable,
} from '../../src/trace/pickle/pickle-writer';

const SAMPLE: PickleWritable = {
  none: null,
  t: true,
  f: false,
  ints: [
    0, 1, 255, 256, 65535, 65536, -1, -255, -256, -65536, 2 ** 31 - 1, -(2 ** 31), 2 ** 31,
    2 ** 32, 2 ** 40 + 5, 140698452453376, 1795950713099098, Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER, 2 ** 60, 0x80, 0x8000, 0x800000, 0x80000000, 0x8000000000,
  ],
  bigints: [0n, 5n, -1n, 2n ** 53n, -(2n ** 53n), 2n ** 64n, -(2n ** 64n), 2n ** 63n - 1n, -(2n ** 63n), 2n ** 2100n, -(2n ** 2047n)],
  floats: [1.5, -2.25, 1e300, 5e-324, Infinity, -Infinity, NaN],
  strs: ['', 'alloc', 'caf\u00e9', '\u65e5\u672c', '\u{1F600}', 'x'.repeat(300), 'y'.repeat(70_000), 'a\nb', 'a\\b'],
  bytes: new Uint8Array([0, 1, 255]),
  long_bytes: new Uint8Array(300).fill(7),
  tuples: [tuple(), tuple(1), tuple(1, 'a'), tuple(1, 2, 3), tuple(1, 2, 3, 4, tuple(5))],
  nested: { a: [1, { b: [2, [3, {}]] }], '': [] },
  many: Array.from({ length: 2345 }, (_, i) => i),
  wide: Object.fromEntries(Array.from({ length: 1234 }, (_, i) => [`k${i}`, i])),
  '1': 'a numeric key',
  skipped: undefined,
};

/** Sets a key as data, even '__proto__'. */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/**
 * The value as readPickle gives it back: tuples become arrays, undefined dict values go,
 * bigints within 2^53 become numbers.
 */
function asRead(v: PickleWritable): PickleValue {
  if (v === undefined) return null;
  if (typeof v === 'bigint') return v >= -(2n ** 53n - 1n) && v <= 2n ** 53n - 1n ? Number(v) : v;
  if (v instanceof PickleTuple) return v.items.map(asRead);
  if (Array.isArray(v)) return v.map(asRead);
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return v as PickleValue;
  const out: Record<string, PickleValue> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) put(out, k, asRead(x as PickleWritable));
  return out;
}

/**
 * A JSON form both sides can produce: ints past 2^53 as {$big}, non-finite floats as
 * {$float}, bytes as {$bytes}, tuples as {$tuple}.
 */
function normalize(v: PickleWritable): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v >= -(2n ** 53n - 1n) && v <= 2n ** 53n - 1n ? Number(v) : { $big: v.toString() };
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return { $float: 'nan' };
    if (!Number.isFinite(v)) return { $float: v > 0 ? 'inf' : '-inf' };
    return v;
  }
  if (typeof v !== 'object') return v;
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString('hex') };
  if (v instanceof PickleTuple) return { $tuple: v.items.map(normalize) };
  if (Array.isArray(v)) return v.map(normalize);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) put(out, k, normalize(x as PickleWritable));
  return out;
}

const PYTHON_NORMALIZE = `
import sys, pickle, json
def norm(x):
    if x is None or isinstance(x, bool) or isinstance(x, str): return x
    if isinstance(x, int): return x if abs(x) <= 2**53 - 1 else {'$big': str(x)}
    if isinstance(x, float):
        if x != x: return {'$float': 'nan'}
        if x in (float('inf'), float('-inf')): return {'$float': 'inf' if x > 0 else '-inf'}
        return x
    if isinstance(x, bytes): return {'$bytes': x.hex()}
    if isinstance(x, tuple): return {'$tuple': [norm(i) for i in x]}
    if isinstance(x, list): return [norm(i) for i in x]
    if isinstance(x, dict): return {k: norm(i) for k, i in x.items()}
    raise TypeError(type(x))
v = pickle.loads(sys.stdin.buffer.read())
json.dump(norm(v), sys.stdout)
`;

const hasPython = spawnSync('python3', ['-c', 'import pickle'], { encoding: 'utf8' }).status === 0;

function python(script: string, input: Uint8Array): string {
  const r = spawnSync('python3', ['-c', script], { input, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return r.stdout;
}

function canonDict(x: Record<string, PickleValue>, canon: (y: PickleValue) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, y] of Object.entries(x)) put(out, k, canon(y));
  return out;
}

describe('writePickle', () => {
  it('round-trips through readPickle', () => {
    expect(readPickle(writePickle(SAMPLE))).toEqual(asRead(SAMPLE));
  });

  it('writes protocol 4 and picks the smallest integer opcode', () => {
    const ops = (v: number | bigint): number[] => [...writePickle(v)];
    expect(ops(5)).toEqual([0x80, 4, 0x4b, 5, 0x2e]); // BININT1
    expect(ops(300)).toEqual([0x80, 4, 0x4d, 0x2c, 0x01, 0x2e]); // BININT2
    expect(ops(-1)).toEqual([0x80, 4, 0x4a, 0xff, 0xff, 0xff, 0xff, 0x2e]); // BININT
    expect(ops(2 ** 31)).toEqual([0x80, 4, 0x8a, 5, 0, 0, 0, 0x80, 0, 0x2e]); // LONG1 + sign byte
    expect(ops(0x7f2000000000)).toEqual([0x80, 4, 0x8a, 6, 0, 0, 0, 0, 0x20, 0x7f, 0x2e]);
    expect(ops(-(2n ** 63n))).toEqual([0x80, 4, 0x8a, 8, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x2e]);
    expect(ops(1.5)).toEqual([0x80, 4, 0x47, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x2e]); // BINFLOAT
  });

  it('round-trips random values', () => {
    const leaf = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.maxSafeInteger(),
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
      fc.double({ noNaN: true }),
      fc.string({ unit: 'grapheme' }),
      fc.uint8Array({ maxLength: 300 }),
    );
    const value = fc.letrec<{ v: PickleWritable }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        leaf as fc.Arbitrary<PickleWritable>,
        fc.array(tie('v')),
        fc.dictionary(fc.string(), tie('v')),
        fc.array(tie('v'), { maxLength: 5 }).map((items) => tuple(...items)),
      ),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        const back = readPickle(writePickle(v));
        const want = asRead(v);
        // The reader gives integers within 2^53 as numbers; -0 comes back as 0.
        const canon = (x: PickleValue): unknown =>
          typeof x === 'bigint' && x >= -(2n ** 53n - 1n) && x <= 2n ** 53n - 1n ? Number(x)
            : typeof x === 'number' && Object.is(x, -0) ? 0
            : Array.isArray(x) ? x.map(canon)
            : x && typeof x === 'object' && !(x instanceof Uint8Array) ? canonDict(x, canon)
            : x;
        expect(canon(back)).toEqual(canon(want));
      }),
      { seed: 99, numRuns: 500 },
    );
  });

  it('writes repeated strings and shared objects once', () => {
    const frames = [{ name: 'forward', filename: '/opt/torch/nn/modules/module.py', line: 1790 }];
    const entries = Array.from({ length: 1000 }, (_, i) => ({ action: 'alloc', addr: i, frames }));
    const size = writePickle(entries).length;
    // Each entry costs its keys and small values by memo reference, not by text.
    expect(size).toBeLessThan(1000 * 30);
    const back = readPickle(writePickle(entries)) as { frames: unknown }[];
    expect(back[0]!.frames).toBe(back[999]!.frames);
  });

  it('writes the items of unsharedItems as Python does (each with its MEMOIZE), with the same result', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ i, tag: 'x' }));
    const plain = writePickle(items);
    const unshared = writePickle(unsharedItems(items));
    // The same bytes: the memo slots are taken, only not looked up again.
    expect(unshared).toEqual(plain);
    expect(readPickle(unshared)).toEqual(readPickle(plain));
  });

  it('writes a list that contains itself', () => {
    const a: PickleWritable[] = [1];
    a.push(a);
    const back = readPickle(writePickle(a)) as PickleValue[];
    expect(back[1]).toBe(back);
  });
});

describe.skipIf(!hasPython)('writePickle output in Python (python3 pickle.loads)', () => {
  it('loads to the same value, tuples as tuples', () => {
    const got = JSON.parse(python(PYTHON_NORMALIZE, writePickle(SAMPLE)));
    expect(got).toEqual(normalize(SAMPLE));
  });

  it('keeps shared objects shared', () => {
    const shared = { name: 'f', filename: 'a.py', line: 1 };
    const out = python(
      'import sys, pickle; v = pickle.loads(sys.stdin.buffer.read()); print(v[0] is v[1], v[0][0] is v[2], type(v[3]).__name__)',
      writePickle([[shared], [shared], shared, tuple(0, 0)]),
    );
    expect(out.trim()).toBe('False True tuple');
  });
});
