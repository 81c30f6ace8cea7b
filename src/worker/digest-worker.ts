// Reads another recording (one compared with the open source, or a rank of a set) and answers with its
// digest (trace/replay/recording-digest.ts); one worker per file, ended after its answer, so that the
// replay worker's source stays as it is and the digest's memory goes with the worker.
/// <reference lib="webworker" />
import { expose, transfer } from 'comlink';
import { recordingDigest, type RecordingDigest } from '../trace/replay/recording-digest';
import { decodeSnapshotBlob } from '../trace/snapshot/snapshot-blob';

const api = {
  async digest(name: string, file: Blob, conf: string | null): Promise<RecordingDigest> {
    const { snapshot, traces } = await decodeSnapshotBlob(file, { details: true });
    const d = recordingDigest(name, snapshot, traces[0] ? { trace: traces[0] } : {}, conf);
    return transfer(d, [d.allocated.buffer, d.reserved.buffer] as ArrayBuffer[]);
  },
};

export type DigestApi = typeof api;

expose(api);
