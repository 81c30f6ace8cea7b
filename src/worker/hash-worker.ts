// Hashes a chosen file for its share link on a thread of its own, while the replay worker reads and
// parses the same file (a File posted to a worker is a handle, not a copy): the hash stays off the
// path to the first view. One message per file: a Blob in, its SHA-256 (or an error) out.
import { sha256OfBlob } from '../lib/sha256';

export type HashReply = { sha256: string } | { error: string };

self.onmessage = (event: MessageEvent<Blob>) => {
  const post = (m: HashReply): void => (self as unknown as DedicatedWorkerGlobalScope).postMessage(m);
  sha256OfBlob(event.data).then(
    (sha256) => post({ sha256 }),
    (e: unknown) => post({ error: e instanceof Error ? e.message : String(e) }),
  );
};
