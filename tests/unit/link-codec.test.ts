// Share links: a view round-trips; a workload's link is short; tampered, truncated, oversized and
// bomb links are refused with a LinkError that says what is wrong.
import { deflateSync, strToU8 } from 'fflate';
import { describe, expect, test } from 'vitest';
import { decodeLink, encodeLink, MAX_LINK_CHARS, toBase64Url } from '../../src/state/link-codec';
import type { LinkState } from '../../src/state/link-schema';
import { LinkError } from '../../src/state/link-error';

const workload: LinkState = {
  v: 1,
  source: { kind: 'workload', id: 'transformer', params: { layers: 24, seed: 7 } },
  conf: 'max_split_size_mb:128,roundup_power2_divisions:4',
  capacityBytes: 85899345920,
  cursor: 12345,
};

const raw = (json: string): string => '#v1=' + toBase64Url(deflateSync(strToU8(json)));

describe('share links', () => {
  test('a view round-trips, and a workload link is under 300 characters', () => {
    const hash = encodeLink(workload);
    expect(decodeLink(hash)).toEqual(workload);
    expect(hash.length).toBeLessThan(300);
    const file: LinkState = { v: 1, source: { kind: 'file', name: 'run.pickle.gz', sha256: 'a'.repeat(64), data: 'AAEC' }, conf: null, capacityBytes: null, cursor: null };
    expect(decodeLink(encodeLink(file))).toEqual(file);
  });

  test('a link embedding a large file round-trips as its view changes (the file is deflated once)', () => {
    let seed = 1;
    const bytes = Uint8Array.from({ length: 150_000 }, (_, i) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) & (i % 7 === 0 ? 0x0f : 0xff));
    const data = toBase64Url(bytes);
    const file = (cursor: number, conf: string | null): LinkState => ({ v: 1, source: { kind: 'file', name: 'run.pickle.gz', sha256: 'b'.repeat(64), data }, conf, capacityBytes: null, cursor });
    const plain = (state: LinkState): string => raw(JSON.stringify(state));
    for (const [cursor, conf] of [[10, null], [11, null], [12, 'max_split_size_mb:128'], [0, null]] as const) {
      const hash = encodeLink(file(cursor, conf));
      expect(decodeLink(hash)).toEqual(file(cursor, conf));
      // About as short as one deflate of the whole view.
      expect(hash.length).toBeLessThan(plain(file(cursor, conf)).length * 1.01);
    }
  });

  test('no hash, or another kind of hash, is no link', () => {
    expect(decodeLink('')).toBeNull();
    expect(decodeLink('#section-2')).toBeNull();
  });

  test('a tampered or truncated link is refused with a reason', () => {
    const hash = encodeLink(workload);
    const flipped = hash.slice(0, 20) + (hash[20] === 'A' ? 'B' : 'A') + hash.slice(21);
    expect(() => decodeLink(flipped)).toThrow(LinkError);
    expect(() => decodeLink(hash.slice(0, hash.length - 10))).toThrow(/damaged|cannot show/);
    expect(() => decodeLink(hash + '!*')).toThrow(/base64url/);
    expect(() => decodeLink('#v2=abc')).toThrow(/another version/);
  });

  test('a link whose data is not a valid view names the field', () => {
    expect(() => decodeLink(raw(JSON.stringify({ ...workload, cursor: -3 })))).toThrow(/cursor/);
    expect(() => decodeLink(raw(JSON.stringify({ ...workload, source: { kind: 'http', url: 'x' } })))).toThrow(LinkError);
    expect(() => decodeLink(raw('not json'))).toThrow(/damaged/);
  });

  test('an oversized link and a decompression bomb are refused before they cost memory', () => {
    expect(() => decodeLink('#v1=' + 'A'.repeat(MAX_LINK_CHARS))).toThrow(/characters long/);
    expect(() => decodeLink('#v1=' + 'A'.repeat(5 * 2 ** 20))).toThrow(/characters long/);
    const bomb = raw(JSON.stringify({ ...workload, conf: ' '.repeat(5_000_000) }));
    expect(bomb.length).toBeLessThan(20_000);
    expect(() => decodeLink(bomb)).toThrow(/decompression bomb/);
  });
});
