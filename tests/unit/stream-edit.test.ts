// A request stream edited as a changed program would make it: frees moved earlier, requests dropped.
// The indices into the stream (deferred frees' completions, the recording's empty_cache calls) follow
// their requests, and `origin` gives each new request's place in the recording.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { replay } from '../../src/trace/replay/replay';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { editStream } from '../../src/trace/stream/stream-edit';

const plan = (file: string) => {
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(file), { gunzip: nodeGunzip });
  return planSnapshotReplay(snapshot, { trace: traces[0]! });
};

test('no edit: the same stream, the same replay', () => {
  for (const file of ['tests/fixtures/real/prefetch__default.pickle.gz', 'tests/fixtures/real/phases.pickle.gz']) {
    const { stream, replayOptions } = plan(file);
    const { stream: same, origin } = editStream(stream, {});
    expect([...origin]).toEqual([...Array(stream.length).keys()]);
    expect(same.completions).toEqual(stream.completions);
    expect(same.recordedEmptyCache).toEqual(stream.recordedEmptyCache);
    const a = replay(stream, { ...replayOptions, statsOnly: true });
    const b = replay(same, { ...replayOptions, statsOnly: true });
    expect(b.stats).toEqual(a.stats);
  }
});

test('a free moved earlier: indices after it shift by one, and peaks can only fall', () => {
  const { stream, replayOptions } = plan('tests/fixtures/real/phases.pickle.gz');
  // The largest plain free of a block that lived 10 requests or more, moved to right after its alloc's next request.
  const madeAt = new Map<number, number>();
  let at = -1;
  for (let i = 0; i < stream.length; i++) {
    if (stream.kind[i] === RequestKind.alloc) madeAt.set(stream.id[i]!, i);
    else if (stream.kind[i] === RequestKind.free && i - madeAt.get(stream.id[i]!)! >= 10 && (at < 0 || stream.size[i]! > stream.size[at]!)) at = i;
  }
  const id = stream.id[at]!;
  const made = madeAt.get(id)!;
  const { stream: edited, origin } = editStream(stream, { drop: new Set([at]), freesBefore: new Map([[made + 2, [{ id, size: stream.size[at]!, stream: stream.stream[at]! }]]]) });
  expect(edited.length).toBe(stream.length);
  expect(origin[made + 2]).toBe(made + 2); // the inserted free stands before old request made + 2
  expect(edited.id[made + 2]).toBe(id);
  // The empty_cache calls follow their requests.
  for (let k = 0; k < stream.recordedEmptyCache.length; k++) {
    const old = stream.recordedEmptyCache[k]!;
    expect(origin[edited.recordedEmptyCache[k]!]).toBe(old === at ? old - 1 : old);
  }
  const a = replay(stream, { ...replayOptions, addresses: 'simulated', statsOnly: true });
  const b = replay(edited, { ...replayOptions, addresses: 'simulated', statsOnly: true });
  expect(b.problems).toEqual([]);
  expect(b.stats['allocated_bytes.all.peak']).toBeLessThanOrEqual(a.stats['allocated_bytes.all.peak']!);
});
