// A request stream in shared memory replays as the plain one does, and posting it shares it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordedConfig } from '../../src/trace/snapshot/recorded-config';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { replay } from '../../src/trace/replay/replay';
import { requestStreamFromTrace } from '../../src/trace/stream/request-stream-from-trace';
import { workloadById } from '../../src/trace/stream/workloads';
import { canShare, isShared, sharedStream } from '../../src/worker/shared-stream';

const { snapshot, traces } = decodeSnapshotForReplay(new Uint8Array(readFileSync(join(__dirname, '../fixtures/real/prefetch__default.pickle.gz'))));
const { config } = recordedConfig(snapshot.allocator_settings);
const COLUMNS = ['kind', 'id', 'size', 'stream', 'source', 'input', 'pool'] as const;

describe('shared request streams', () => {
  afterEach(() => {
    delete (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
  });

  it('built in shared memory, a stream holds the same requests and replays to the same stats', () => {
    const plain = requestStreamFromTrace(traces[0]!, snapshot.segments, { config });
    const shared = requestStreamFromTrace(traces[0]!, snapshot.segments, { config, sharedMemory: true });
    expect(isShared(plain)).toBe(false);
    expect(isShared(shared)).toBe(true);
    for (const key of COLUMNS) {
      expect(shared[key].buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(Array.from(shared[key])).toEqual(Array.from(plain[key]));
    }
    const options = { config, addresses: 'recorded' as const };
    expect(replay(shared, options).stats).toEqual(replay(plain, options).stats);
  });

  it('posted to another thread, its columns are shared, not copied', () => {
    const shared = requestStreamFromTrace(traces[0]!, snapshot.segments, { config, sharedMemory: true });
    const posted = structuredClone(shared);
    posted.size[0] = 12345;
    expect(shared.size[0]).toBe(12345);
  });

  it('sharedStream copies a stream into shared memory only where the page is cross-origin isolated', () => {
    const stream = workloadById('transformer')!.generate({});
    expect(canShare()).toBe(false);
    expect(sharedStream(stream)).toBe(stream);
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated = true;
    const shared = sharedStream(stream);
    expect(isShared(shared)).toBe(true);
    for (const key of COLUMNS) expect(Array.from(shared[key])).toEqual(Array.from(stream[key]));
    expect(sharedStream(shared)).toBe(shared);
  });
});
