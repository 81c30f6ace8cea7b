// SHA-256 as lower-case hex: how a share link names a snapshot file. WebCrypto hashes at native
// speed (~1 GB/s here) but takes the whole input and copies it (a 320 MB snapshot: 0.6-0.8 s and
// another 320 MB, twice the file held), and only in secure contexts (a page served with --host on
// plain http has no crypto.subtle); @noble/hashes hashes a stream in constant memory, at ~130 MB/s.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

export function sha256Hex(bytes: Uint8Array): string {
  return bytesToHex(sha256(bytes));
}

/** Files up to this size are hashed whole with WebCrypto where it exists; larger ones as a stream. */
const WHOLE_FILE_BYTES = 64 * 2 ** 20;

/** The hash of a Blob (a File). */
export async function sha256OfBlob(blob: Blob): Promise<string> {
  if (blob.size <= WHOLE_FILE_BYTES && globalThis.crypto?.subtle) {
    return bytesToHex(new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer())));
  }
  return sha256OfStream(blob);
}

/** The hash of a Blob read a chunk at a time. */
export async function sha256OfStream(blob: Blob): Promise<string> {
  const hash = sha256.create();
  const reader = blob.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hash.update(value);
  }
  return bytesToHex(hash.digest());
}
