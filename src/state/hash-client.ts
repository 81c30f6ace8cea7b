// The page's side of the hash worker: one worker per file hashed (it ends when the hash is in).
import type { HashReply } from '../worker/hash-worker';
import { startWorker } from './workers';

/** Hashes already taken: a file chosen for a link is hashed before it opens, and its share link
 * asks for the same hash after its first view. */
const known = new WeakMap<Blob, string>();

/** The SHA-256 of `file`, computed off the page's thread; `signal` ends the worker and rejects. */
export function hashFile(file: Blob, signal?: AbortSignal): Promise<string> {
  const sha256 = known.get(file);
  if (sha256 !== undefined) return Promise.resolve(sha256);
  return new Promise((resolve, reject) => {
    const worker = startWorker('hash');
    const end = (): void => worker.terminate();
    signal?.addEventListener('abort', () => {
      end();
      reject(new Error('The hash was stopped: another source opened.'));
    });
    worker.onmessage = (event: MessageEvent<HashReply>) => {
      end();
      const m = event.data;
      if (!('sha256' in m)) return reject(new Error(`The file could not be read to hash it: ${m.error}`));
      known.set(file, m.sha256);
      resolve(m.sha256);
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      end();
      reject(new Error(`The file could not be hashed: ${event.message || 'the hash worker stopped'}`));
    };
    worker.postMessage(file);
  });
}
