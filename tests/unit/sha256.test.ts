// The share link's file hash: the same hex as Node's crypto, for bytes and for a Blob read as a stream.
import { createHash } from 'node:crypto';
import { expect, test } from 'vitest';
import { sha256Hex, sha256OfBlob, sha256OfStream } from '../../src/lib/sha256';

test('sha256 of bytes, of a Blob whole and of a Blob streamed in chunks match node:crypto', async () => {
  const bytes = Uint8Array.from({ length: 3 * 2 ** 20 + 17 }, (_, i) => (i * 2654435761) >>> 24);
  const expected = createHash('sha256').update(bytes).digest('hex');
  expect(sha256Hex(bytes)).toBe(expected);
  const blob = new Blob([bytes.subarray(0, 5), bytes.subarray(5)]);
  expect(await sha256OfBlob(blob)).toBe(expected);
  expect(await sha256OfStream(blob)).toBe(expected);
  expect(sha256Hex(new Uint8Array(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test('a Blob streamed over several slices, and an empty one, match node:crypto', async () => {
  const bytes = new Uint8Array(40 * 2 ** 20 + 17);
  for (let i = 0; i < bytes.length; i += 4093) bytes[i] = i >>> 12;
  expect(await sha256OfStream(new Blob([bytes]))).toBe(createHash('sha256').update(bytes).digest('hex'));
  expect(await sha256OfStream(new Blob([]))).toBe(createHash('sha256').digest('hex'));
});
