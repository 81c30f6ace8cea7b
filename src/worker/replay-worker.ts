// Parses snapshots and replays them off the main thread.
/// <reference lib="webworker" />
import { configToString } from '../allocator/config';
import { replaySnapshot } from '../trace/replay-snapshot';
import type { RequestStream } from '../trace/request-stream';
import type { Snapshot } from '../trace/snapshot';
import { decodeSnapshotFile } from '../trace/snapshot-file';
import type { FromWorker, ToWorker } from './replay-protocol';

let source: { name: string; snapshot: Snapshot; stream?: RequestStream } | null = null;
const post = (m: FromWorker): void => (self as unknown as DedicatedWorkerGlobalScope).postMessage(m);

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  try {
    if (m.type === 'open') {
      const snapshot = decodeSnapshotFile(new Uint8Array(m.bytes), {
        onProgress: (fraction) => post({ type: 'progress', fraction }),
      });
      // Only a file that parsed replaces the current source: a bad file leaves the view as it was.
      source = { name: m.name, snapshot };
      post({ type: 'opened', name: m.name });
      return;
    }
    if (!source) throw new Error('No snapshot is open.');
    if (m.type === 'stream' && source.stream) {
      post({ type: 'stream', stream: source.stream });
      return;
    }
    const conf = m.type === 'replay' ? m.conf : null;
    const capacityBytes = m.type === 'replay' ? m.capacityBytes : null;
    const run = replaySnapshot(source.snapshot, {
      ...(conf !== null ? { conf } : {}),
      ...(capacityBytes !== null ? { capacity: { kind: 'fraction' as const, bytes: capacityBytes } } : {}),
      ...(source.stream ? { stream: source.stream } : {}),
    });
    source.stream = run.stream;
    if (m.type === 'stream') {
      post({ type: 'stream', stream: run.stream });
      return;
    }
    post({
      type: 'result',
      summary: {
        source: source.name,
        conf: configToString(run.config),
        recordedConf: configToString(run.recorded),
        addresses: run.addresses,
        requests: run.stream.length,
        events: run.result.events.length,
        stats: run.result.stats,
        ooms: run.result.ooms,
        notes: run.notes,
      },
    });
  } catch (e) {
    post({ type: 'error', message: (e as Error).message, ...(m.type === 'stream' ? { stream: true } : {}) });
  }
};
