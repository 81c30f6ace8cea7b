// Request streams built from real traces: logical ids, mid-run completion, OOMs of the recording,
// and what a recorded-address replay says when the recording never made a segment it needs.
import { expect, test } from 'vitest';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { requestStreamFromSnapshot } from '../../src/trace/stream/request-stream-from-trace';
import { recordedConfig } from '../../src/trace/snapshot/recorded-config';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { loadTrace, MANIFEST } from './reference-traces';

test('train_gpt2-n12 begins mid-run: 21 of 226 segments and 148 live blocks predate its first event', () => {
  const snapshot = loadTrace('train_gpt2-n12__default.pickle.gz');
  const stream = requestStreamFromSnapshot(snapshot, { config: recordedConfig(snapshot.allocator_settings).config });
  expect(snapshot.segments.length).toBe(226);
  expect(stream.initialSegments.length).toBe(21);
  expect(stream.initialBlocks.length).toBe(148);
  // Every initial block lies inside an initial segment, and none overlap.
  const blocks = [...stream.initialBlocks].sort((a, b) => a.addr - b.addr);
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    expect(stream.initialSegments.some((s) => s.addr <= b.addr && b.addr + b.size <= s.addr + s.size)).toBe(true);
    if (i > 0) expect(blocks[i - 1]!.addr + blocks[i - 1]!.size).toBeLessThanOrEqual(b.addr);
  }
  expect(stream.notes.join(' ')).toMatch(/begins mid-run: 21 segments and 148 live blocks/);
});

test('every id is allocated once and freed at most once, in order', () => {
  const snapshot = loadTrace('random-s1__default.pickle.gz');
  const stream = requestStreamFromSnapshot(snapshot);
  const state = new Uint8Array(stream.idCount); // 0 new, 1 live, 2 freed
  for (const b of stream.initialBlocks) state[b.id] = 1;
  for (let i = 0; i < stream.length; i++) {
    const id = stream.id[i]!;
    if (stream.kind[i] === RequestKind.alloc) {
      expect(state[id]).toBe(0);
      state[id] = 1;
    } else {
      expect(state[id]).toBe(1);
      state[id] = 2;
    }
  }
  expect(stream.length).toBe(MANIFEST.find((t) => t.file === 'random-s1__default.pickle.gz')!.requests);
});

test('a request that hit OOM in the recording is freed right after it, and the user is told', () => {
  const trace = MANIFEST.find((t) => t.file === 'transformer-s1__roundup_power2_divisions=4.pickle.gz')!;
  const snapshot = loadTrace(trace.file);
  const stream = requestStreamFromSnapshot(snapshot);
  expect(stream.failedInRecording.size).toBe(15);
  expect(stream.length).toBe(trace.requests); // the workload's 20,000 requests, its dels of failed tensors included
  for (let i = 0; i < stream.length; i++) {
    if (stream.kind[i] === RequestKind.alloc && stream.failedInRecording.has(stream.id[i]!)) {
      expect(stream.kind[i + 1]).toBe(RequestKind.free);
      expect(stream.id[i + 1]).toBe(stream.id[i]);
    }
  }
  expect(stream.notes.join(' ')).toMatch(/15 requests failed with OOM in the recording/);
  // Without the 6 GiB cap they succeed.
  const run = replaySnapshot(snapshot, { addresses: 'simulated', capacity: null });
  expect(run.result.stats['num_ooms']).toBe(0);
});

test('recorded addresses without the recorded cap: the replay says where it left the recording', () => {
  const snapshot = loadTrace('transformer-s1__default.pickle.gz');
  const run = replaySnapshot(snapshot, { addresses: 'recorded' }); // the recording ran under a 6 GiB cap
  expect(run.result.divergences.length).toBeGreaterThan(0);
  const first = run.result.divergences[0]!;
  expect(first.request).toBeGreaterThanOrEqual(0);
  expect(run.notes.join(' ')).toMatch(new RegExp(`never made ${run.result.divergences.length} of the segments .*first at request ${first.request}`));
});
