import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../src/lib/import-error';
import { readPickle, type PickleDict, type PickleValue } from '../../src/trace/pickle/pickle-reader';
import { writePickle } from '../../src/trace/pickle/pickle-writer';

// tests/fixtures/pickle/ was made with python3 3.x by this script, run in that folder:
//
//   import pickle, gzip
//   shared = ['shared', 1]
//   def value(protocol):
//       v = {
//           'none': None, 'true': True, 'false': False,
//           'ints': [0, 1, 255, 256, 65535, 65536, -1, -256, 2**31 - 1, -2**31, 2**31,
//                    2**53 - 1, -(2**53 - 1), 2**53, -(2**53), 2**64, -(2**70), 2**2100,
//                    140698452453376, 1795950713099098],
//           'floats': [0.0, 1.5, -2.25, 1e300, float('inf')],
//           'strs': ['', 'alloc', '\u00e9', '\u65e5\u672c', 'x' * 300, '\U0001F600', 'a\\b', 'a\nb'],
//           'tuples': [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
//           'nested': {'a': [1, {'b': (2, [3])}]},
//           'shared': [shared, shared],
//           1: 'int key',
//           'big_list': list(range(1001)),
//           'big_dict': {('k%d' % i): i for i in range(1001)},
//       }
//       if protocol >= 3: v['bytes'] = b'\x00\x01\xff'
//       if protocol >= 4: v['set'] = {7}; v['frozenset'] = frozenset({8})
//       if protocol >= 5: v['bytearray'] = bytearray(b'abc')
//       return v
//   for p in range(6):
//       open('protocol-%d.pickle' % p, 'wb').write(pickle.dumps(value(p), protocol=p))
//   # A small snapshot for the truncation tests.
//   full = pickle.load(gzip.open('../train_gpt2-n12__default.pickle.gz'))
//   seg = dict(full['segments'][0]); seg['blocks'] = seg['blocks'][:2]
//   small = {'segments': [seg],
//            'device_traces': [[dict(e, frames=e['frames'][:2]) for e in full['device_traces'][0][:6]]],
//            'allocator_settings': full['allocator_settings'],
//            'external_annotations': full['external_annotations'][:1]}
//   for p in (2, 4):
//       open('snapshot-small-protocol-%d.pickle' % p, 'wb').write(pickle.dumps(small, protocol=p))
//
// Protocol 0 uses the text opcodes (INT, LONG, FLOAT, UNICODE, PUT, GET, LIST, DICT, TUPLE),
// 1 the binary ones, 2 adds PROTO/LONG1/LONG4/TUPLE1-3/NEWTRUE, 3 SHORT_BINBYTES, 4 FRAME,
// MEMOIZE, SHORT_BINUNICODE and sets, 5 BYTEARRAY8.

const FIXTURES = join(__dirname, '../fixtures/pickle');
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));

/** Bytes from numbers (single bytes), strings (latin-1) and byte arrays. */
function bytes(...parts: (number | string | Uint8Array | number[])[]): Uint8Array {
  const out: number[] = [];
  for (const p of parts) {
    if (typeof p === 'number') out.push(p);
    else if (typeof p === 'string') for (let i = 0; i < p.length; i++) out.push(p.charCodeAt(i));
    else out.push(...p);
  }
  return new Uint8Array(out);
}

const u32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];
const u64 = (lo: number, hi: number): number[] => [...u32(lo), ...u32(hi)];

function importError(fn: () => unknown): ImportError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ImportError) return e;
    throw e;
  }
  throw new Error('expected an ImportError, but nothing was thrown');
}

const read = (...parts: Parameters<typeof bytes>): PickleValue => readPickle(bytes(...parts));

function expected(protocol: number): PickleDict {
  const shared = ['shared', 1];
  const range = Array.from({ length: 1001 }, (_, i) => i);
  const v: PickleDict = {
    none: null,
    true: true,
    false: false,
    ints: [
      0, 1, 255, 256, 65535, 65536, -1, -256, 2 ** 31 - 1, -(2 ** 31), 2 ** 31,
      Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2n ** 53n, -(2n ** 53n), 2n ** 64n,
      -(2n ** 70n), 2n ** 2100n, 140698452453376, 1795950713099098,
    ],
    floats: [0, 1.5, -2.25, 1e300, Infinity],
    strs: ['', 'alloc', '\u00e9', '\u65e5\u672c', 'x'.repeat(300), '\u{1F600}', 'a\\b', 'a\nb'],
    tuples: [[], [1], [1, 2], [1, 2, 3], [1, 2, 3, 4]],
    nested: { a: [1, { b: [2, [3]] }] },
    shared: [shared, shared],
    '1': 'int key',
    big_list: range,
    big_dict: Object.fromEntries(range.map((i) => [`k${i}`, i])),
  };
  if (protocol >= 3) v.bytes = new Uint8Array([0, 1, 255]);
  if (protocol >= 4) {
    v.set = [7];
    v.frozenset = [8];
  }
  if (protocol >= 5) v.bytearray = new Uint8Array([97, 98, 99]);
  return v;
}

describe('readPickle: pickles written by Python', () => {
  for (const protocol of [0, 1, 2, 3, 4, 5]) {
    it(`reads protocol ${protocol}`, () => {
      const v = readPickle(fixture(`protocol-${protocol}.pickle`)) as PickleDict;
      expect(v).toEqual(expected(protocol));
      // Memoized objects come back shared, not copied.
      const shared = v.shared as PickleValue[][];
      expect(shared[0]).toBe(shared[1]);
      expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    });
  }

  it('reads the small snapshot in protocols 2 and 4 to the same value', () => {
    const a = readPickle(fixture('snapshot-small-protocol-2.pickle')) as PickleDict;
    const b = readPickle(fixture('snapshot-small-protocol-4.pickle'));
    expect(a).toEqual(b);
    const first = (a.device_traces as PickleDict[][])[0]![0]!;
    expect(first).toEqual({
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
    expect((a.segments as PickleDict[])[0]!.segment_pool_id).toEqual([0, 0]);
  });
});

describe('readPickle: opcodes', () => {
  it('reads NONE, NEWTRUE, NEWFALSE and protocol 0 booleans', () => {
    expect(read(0x80, 2, 'N.')).toBe(null);
    expect(read(0x80, 2, 0x88, '.')).toBe(true);
    expect(read(0x80, 2, 0x89, '.')).toBe(false);
    expect(read('I01\n.')).toBe(true);
    expect(read('I00\n.')).toBe(false);
  });

  it('reads integers of every width, BININT signed and BININT1/2 unsigned', () => {
    expect(read('K', 0xff, '.')).toBe(255);
    expect(read('M', 0xff, 0xff, '.')).toBe(65535);
    expect(read('J', 0xff, 0xff, 0xff, 0xff, '.')).toBe(-1);
    expect(read('J', ...u32(0x7fffffff), '.')).toBe(2147483647);
    expect(read('I-42\n.')).toBe(-42);
    expect(read('L123L\n.')).toBe(123);
    expect(read('L123\n.')).toBe(123);
    expect(read('L-18446744073709551616L\n.')).toBe(-(2n ** 64n));
    expect(read('I9007199254740993\n.')).toBe(9007199254740993n);
  });

  it('reads LONG1 and LONG4: numbers up to 2^53 - 1, BigInt beyond', () => {
    expect(read(0x8a, 0, '.')).toBe(0);
    expect(read(0x8a, 1, 0xff, '.')).toBe(-1);
    expect(read(0x8a, 2, 0x00, 0x80, '.')).toBe(-32768);
    expect(read(0x8a, 6, 0, 0, 0, 0, 0x20, 0x7f, '.')).toBe(0x7f2000000000);
    // 2^53 - 1 and -(2^53 - 1): the largest exact doubles stay numbers.
    expect(read(0x8a, 7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, '.')).toBe(Number.MAX_SAFE_INTEGER);
    expect(read(0x8a, 7, 1, 0, 0, 0, 0, 0, 0xe0, '.')).toBe(-Number.MAX_SAFE_INTEGER);
    expect(read(0x8a, 7, 0, 0, 0, 0, 0, 0, 0x20, '.')).toBe(2n ** 53n);
    expect(read(0x8a, 8, 0, 0, 0, 0, 0, 0, 0, 0x80, '.')).toBe(-(2n ** 63n));
    expect(read(0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1, '.')).toBe(2n ** 64n);
    // A redundant long encoding of a small value still gives a number.
    expect(read(0x8a, 10, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, '.')).toBe(5);
    expect(read(0x8b, ...u32(2), 0x01, 0x01, '.')).toBe(257);
    expect(read(0x8b, ...u32(0), '.')).toBe(0);
  });

  it('reads floats: BINFLOAT is big-endian, FLOAT is text', () => {
    expect(read('G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, '.')).toBe(1.5);
    expect(read('F-2.25\n.')).toBe(-2.25);
    expect(read('Finf\n.')).toBe(Infinity);
    expect(read('F-inf\n.')).toBe(-Infinity);
    expect(read('Fnan\n.')).toBeNaN();
    expect(read('F1e+300\n.')).toBe(1e300);
  });

  it('reads every string opcode', () => {
    expect(read(0x8c, 2, 0xc3, 0xa9, '.')).toBe('\u00e9');
    expect(read('X', ...u32(3), 'abc.')).toBe('abc');
    expect(read(0x8d, ...u64(2, 0), 'hi.')).toBe('hi');
    expect(read('Vcaf\u00e9 \\u65e5 \\U0001f600\n.')).toBe('caf\u00e9 \u65e5 \u{1F600}');
    // Python 2 str: latin-1 here (TextDecoder's 'latin1' would be cp1252).
    expect(read('U', 2, 0x80, 0xe9, '.')).toBe('\u0080\u00e9');
    expect(read('T', ...u32(3), 'xyz.')).toBe('xyz');
    expect(read("S'it\\'s'\n.")).toBe("it's");
    expect(read('S"a\\x41\\n\\101\\\\"\n.')).toBe('aA\nA\\');
    // Invalid UTF-8 decodes with replacement characters rather than failing.
    expect(read(0x8c, 1, 0xff, '.')).toBe('\ufffd');
  });

  it('reads every bytes opcode as a copied Uint8Array', () => {
    expect(read('C', 2, 1, 2, '.')).toEqual(new Uint8Array([1, 2]));
    expect(read('B', ...u32(1), 9, '.')).toEqual(new Uint8Array([9]));
    expect(read(0x8e, ...u64(1, 0), 7, '.')).toEqual(new Uint8Array([7]));
    expect(read(0x96, ...u64(0, 0), '.')).toEqual(new Uint8Array([]));
    const input = Buffer.from(bytes('C', 2, 1, 2, '.'));
    const out = readPickle(input) as Uint8Array;
    expect(out).toEqual(new Uint8Array([1, 2]));
    expect(out.buffer).not.toBe(input.buffer);
    expect(Object.getPrototypeOf(out)).toBe(Uint8Array.prototype);
  });

  it('reads tuples, lists, dicts and sets built every way', () => {
    expect(read(0x80, 2, ')', '.')).toEqual([]);
    expect(read(0x80, 2, 'K', 1, 0x85, '.')).toEqual([1]);
    expect(read(0x80, 2, 'K', 1, 'K', 2, 0x86, '.')).toEqual([1, 2]);
    expect(read(0x80, 2, 'K', 1, 'K', 2, 'K', 3, 0x87, '.')).toEqual([1, 2, 3]);
    expect(read('(K', 1, 'K', 2, 'K', 3, 'K', 4, 't.')).toEqual([1, 2, 3, 4]);
    expect(read('(K', 1, 'K', 2, 'l.')).toEqual([1, 2]);
    expect(read(']K', 1, 'a.')).toEqual([1]);
    expect(read('](K', 1, 'K', 2, 'e.')).toEqual([1, 2]);
    expect(read('(', 0x8c, 1, 'aK', 1, 'd.')).toEqual({ a: 1 });
    expect(read('}', 0x8c, 1, 'aK', 1, 's.')).toEqual({ a: 1 });
    expect(read('}(', 0x8c, 1, 'aK', 1, 0x8c, 1, 'bK', 2, 'u.')).toEqual({ a: 1, b: 2 });
    expect(read(0x8f, '(K', 1, 'K', 2, 0x90, '.')).toEqual([1, 2]);
    expect(read('(K', 3, 0x91, '.')).toEqual([3]);
  });

  it('turns int, bool and None dict keys into strings and keeps __proto__ as a plain key', () => {
    expect(read('}(K', 1, 'K', 2, 'J', ...u32(0xffffffff), 'K', 3, 'u.')).toEqual({ '1': 2, '-1': 3 });
    expect(read('}(', 0x88, 'K', 1, 'NK', 2, 'u.')).toEqual({ True: 1, None: 2 });
    const v = read('}(', 0x8c, 9, '__proto__', '}', 0x8c, 1, 'xK', 1, 's', 'u.') as PickleDict;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ x: 1 });
    expect(({} as { x?: unknown }).x).toBeUndefined();
  });

  it('handles the memo (PUT, GET, BINPUT, MEMOIZE, LONG_BINPUT, LONG_BINGET) and stack ops', () => {
    const selfRef = read('(lp0\ng0\na.') as PickleValue[];
    expect(selfRef[0]).toBe(selfRef); // a list that contains itself
    expect(read(']q', 5, 'h', 5, 'a.')).toHaveLength(1);
    expect(read(0x8c, 1, 'a', 0x94, 0x8c, 1, 'b', 0x94, '0h', 0, 0x86, '.')).toEqual(['a', 'a']);
    expect(read(0x8c, 1, 'a', 'r', ...u32(70000), '0j', ...u32(70000), '.')).toBe('a');
    expect(read('K', 1, '2', 0x86, '.')).toEqual([1, 1]); // DUP
    expect(read('K', 1, '(K', 2, 'K', 3, '1.')).toBe(1); // POP_MARK
    expect(read('K', 1, 'K', 2, '0.')).toBe(1); // POP
    expect(read('K', 1, '(0.')).toBe(1); // POP of an empty MARK frame drops the MARK
  });

  it('skips FRAME and ignores bytes after STOP', () => {
    expect(read(0x80, 4, 0x95, ...u64(3, 0), 'K', 7, '.', 'garbage')).toBe(7);
  });
});

describe('readPickle: refuses code and rejects damage', () => {
  it('refuses GLOBAL, naming the callable and the offset', () => {
    const e = importError(() => read("cos\nsystem\n(S'echo hi'\ntR."));
    expect(e.code).toBe('unsafe-opcode');
    expect(e.message).toContain("opcode GLOBAL 'os system' at byte 0");
    expect(e.message).toContain('data only');
  });

  it('refuses STACK_GLOBAL and REDUCE, naming them', () => {
    const sg = importError(() => read(0x80, 4, 0x8c, 2, 'os', 0x8c, 6, 'system', 0x93, '.'));
    expect(sg.code).toBe('unsafe-opcode');
    expect(sg.message).toContain("STACK_GLOBAL 'os system' at byte 14");
    const r = importError(() => read(0x80, 2, 'N)R.'));
    expect(r.code).toBe('unsafe-opcode');
    expect(r.message).toContain('opcode REDUCE at byte 4');
  });

  it('refuses every opcode that builds objects or calls code', () => {
    const refused: [number, string][] = [
      [0x62, 'BUILD'], [0x69, 'INST'], [0x6f, 'OBJ'], [0x81, 'NEWOBJ'], [0x92, 'NEWOBJ_EX'],
      [0x50, 'PERSID'], [0x51, 'BINPERSID'], [0x82, 'EXT1'], [0x83, 'EXT2'], [0x84, 'EXT4'],
      [0x97, 'NEXT_BUFFER'], [0x98, 'READONLY_BUFFER'], [0x52, 'REDUCE'], [0x63, 'GLOBAL'],
      [0x93, 'STACK_GLOBAL'],
    ];
    for (const [op, name] of refused) {
      const e = importError(() => read(0x80, 5, 'NN', op, 'a\nb\n.'));
      expect(e.code, name).toBe('unsafe-opcode');
      expect(e.message, name).toContain(`opcode ${name}`);
      expect(e.offset, name).toBe(4);
    }
  });

  it('rejects unknown opcodes and newer protocols', () => {
    const e = importError(() => read(0x80, 4, 0xff, '.'));
    expect(e.code).toBe('bad-opcode');
    expect(e.message).toContain('0xff at byte 2');
    expect(importError(() => read(0x80, 6, 'N.')).code).toBe('bad-opcode');
  });

  it('rejects stack underflow and MARK misuse', () => {
    for (const p of [bytes('.'), bytes('a.'), bytes('K', 1, 'a.'), bytes('e.'), bytes('u.'), bytes('t.'),
      bytes('1.'), bytes('0.'), bytes('2.'), bytes(0x94, '.'), bytes('(.'), bytes(0x86, '.'), bytes('(K', 1, 0x86, '.'),
      bytes('K', 1, '(K', 2, 'u.'), bytes(']K', 1, 'K', 2, 's.'), bytes('h', 3, '.'), bytes('(K', 1, 'd.')]) {
      const e = importError(() => readPickle(p));
      expect(e.code, String(p)).toBe('bad-opcode');
      expect(e.message).toMatch(/malformed/);
    }
  });

  it('rejects dict keys that are lists or dicts', () => {
    expect(importError(() => read('}]K', 1, 's.')).message).toContain('dict key that is a list');
  });

  it('stops at the nesting limit', () => {
    const deep = new Uint8Array(10_010).fill(0x28);
    expect(importError(() => readPickle(deep)).code).toBe('too-deep');
    expect(importError(() => readPickle(bytes('((((N.'), { maxDepth: 3 })).code).toBe('too-deep');
  });

  it('reports truncation for every prefix of real pickles, and nothing else', () => {
    for (const name of ['snapshot-small-protocol-2.pickle', 'snapshot-small-protocol-4.pickle', 'protocol-0.pickle']) {
      const whole = fixture(name);
      expect(readPickle(whole)).toBeTruthy();
      // protocol-0 is larger: every 11th prefix keeps the test quick and still hits each opcode.
      const step = whole.length > 4000 ? 11 : 1;
      for (let n = 0; n < whole.length; n += step) {
        const e = importError(() => readPickle(whole.subarray(0, n)));
        expect(e.code, `${name} cut at ${n}`).toBe('truncated');
        expect(e.message).toMatch(/truncated/);
      }
    }
  });

  it('says where a cut-off file ends', () => {
    const e = importError(() => read(0x80, 4, 0x8c, 10, 'abc'));
    expect(e.message).toBe(
      'The pickle is truncated at byte 7 of at least 14: opcode SHORT_BINUNICODE at byte 2 runs ' +
        'past the end of the file, which was cut off. Re-download or re-save it.',
    );
    expect(importError(() => read(0x80, 4, 'N')).message).toContain('without the STOP opcode');
  });

  it('treats a length past the end of the input as truncation, before allocating', () => {
    const claims = [
      bytes(0x80, 4, 0x8d, ...u64(0, 1), 'abc'), // BINUNICODE8: 4 GiB
      bytes(0x80, 4, 0x8e, ...u64(0xffffffff, 0xfffff), 'abc'), // BINBYTES8: 2^52
      bytes(0x80, 4, 0x96, ...u64(0, 0x100), 'abc'),
      bytes('X', ...u32(0xffffffff), 'abc'),
      bytes('B', ...u32(0xffffffff), 'abc'),
      bytes('T', ...u32(0x7fffffff), 'abc'),
      bytes(0x8b, ...u32(0x7fffffff), 'abc'),
      bytes(0x80, 4, 0x95, ...u64(0, 0x10000), 'N.'), // FRAME
    ];
    for (const p of claims) {
      const t = performance.now();
      expect(importError(() => readPickle(p)).code).toBe('truncated');
      expect(performance.now() - t).toBeLessThan(100);
    }
  });

  it('never throws anything but ImportError on random bytes, and always finishes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (body, framed) => {
        const input = framed ? bytes(0x80, 4, body) : body;
        try {
          readPickle(input);
        } catch (e) {
          if (!(e instanceof ImportError)) throw e;
        }
      }),
      { seed: 20240601, numRuns: 3000 },
    );
  });

  it('never throws anything but ImportError on damaged real pickles', () => {
    const original = fixture('snapshot-small-protocol-2.pickle');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(original.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (edits) => {
          const damaged = original.slice();
          for (const [at, v] of edits) damaged[at] = v;
          try {
            readPickle(damaged);
          } catch (e) {
            if (!(e instanceof ImportError)) throw e;
          }
        },
      ),
      { seed: 7, numRuns: 3000 },
    );
  });
});

describe('readPickle: progress', () => {
  it('reports rising fractions about every 4 MB and 1 at the end', () => {
    const items = Array.from({ length: 400_000 }, (_, i) => `item-${i}-${'x'.repeat(i % 20)}`);
    const pickle = writePickle(items);
    expect(pickle.length).toBeGreaterThan(8 << 20);
    const seen: number[] = [];
    const v = readPickle(pickle, { onProgress: (f) => seen.push(f) });
    expect(v).toEqual(items);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.length).toBeLessThan(20);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    expect(seen.at(-1)).toBe(1);
  });
});
