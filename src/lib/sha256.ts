// SHA-256 as lower-case hex: how a share link names a snapshot file. WebCrypto hashes at native
// speed (~1 GB/s here) but takes the whole input and copies it (a 320 MB snapshot: 0.6-0.8 s and
// another 320 MB, twice the file held), and only in secure contexts (a page served with --host on
// plain http has no crypto.subtle). A larger file is hashed as it is read, in constant memory, by
// hash-wasm (WebAssembly: 360 MB/s here, where @noble/hashes, which hashes the small inputs that must
// be hashed at once, runs at 170).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { createSHA256 } from 'hash-wasm';

export function sha256Hex(bytes: Uint8Array): string {
  return bytesToHex(sha256(bytes));
}

/** Files up to this size are hashed whole with WebCrypto where it exists; larger ones as a stream. */
const WHOLE_FILE_BYTES = 64 * 2 ** 20;

/** Bytes read at a time: large slices, the next read while the last is hashed (Blob.stream()'s
 * 64 KiB chunks each cost the browser a round trip). */
const SLICE_BYTES = 16 << 20;

/** The hash of a Blob (a File). */
export async function sha256OfBlob(blob: Blob): Promise<string> {
  if (blob.size <= WHOLE_FILE_BYTES && globalThis.crypto?.subtle) {
    return bytesToHex(new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer())));
  }
  return sha256OfStream(blob);
}

/** The hash of a Blob read a slice at a time. */
export async function sha256OfStream(blob: Blob): Promise<string> {
  const hash = await createSHA256();
  hash.init();
  const read = (at: number): Promise<ArrayBuffer> | null => (at < blob.size ? blob.slice(at, at + SLICE_BYTES).arrayBuffer() : null);
  let next = read(0);
  for (let at = SLICE_BYTES; next; at += SLICE_BYTES) {
    const bytes = new Uint8Array(await next);
    next = read(at);
    hash.update(bytes);
  }
  return hash.digest('hex');
}
