// The program's phases on the requests: record_function ranges from external_annotations and the
// stretches under one user_metadata, from a recording made with both (tests/fixtures/job/annotated).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { requestOfEntries } from '../../src/trace/measures/event-rows';
import { requestTimes, timelineAnnotations } from '../../src/trace/measures/timeline-annotations';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile, decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { FIXTURES } from '../conformance/reference-traces';

test('annotated: its optimizer steps and its user_metadata phases, in order, each where the recording put it', () => {
  const bytes = readFileSync(join(FIXTURES, 'job/annotated.pickle.gz'));
  const { snapshot, traces } = decodeSnapshotForReplay(bytes, { details: true });
  const trace = traces[0]!;
  const { stream } = replaySnapshot(snapshot, { trace });
  const times = requestTimes(stream, trace.details)!;
  for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThanOrEqual(times[i - 1]!);
  const all = timelineAnnotations(stream, trace.details, snapshot.external_annotations, 0, times, () => requestOfEntries(stream, trace.length));
  const phases = all.filter((a) => a.kind === 'metadata');
  // The recording's own changes of value. (Backward runs on autograd's thread, where the metadata,
  // which is per thread, is unset: "step k backward" comes back after an unlabelled stretch.)
  const entries = decodeSnapshotFile(bytes).device_traces[0]!;
  const changes: string[] = [];
  let last = '';
  for (const e of entries) {
    const v = e.user_metadata ?? '';
    if (v !== last && v !== '') changes.push(v);
    last = v;
  }
  expect(changes.length).toBeGreaterThanOrEqual(12);
  expect(phases.map((a) => a.label)).toEqual(changes);
  for (let k = 1; k < phases.length; k++) expect(phases[k]!.start).toBeGreaterThan(phases[k - 1]!.end);
  // Each phase's allocs carry its user_metadata in the recording.
  for (const p of phases) {
    for (let i = p.start; i <= p.end; i++) {
      const e = entries[stream.source[i]!]!;
      if (e.action === 'alloc') expect(e.user_metadata).toBe(p.label);
    }
  }
  const ranges = all.filter((a) => a.kind === 'range');
  expect(ranges.length).toBe((snapshot.external_annotations ?? []).length / 2);
  expect(new Set(ranges.map((r) => r.label))).toEqual(new Set(['Optimizer.step#AdamW.step', 'Optimizer.zero_grad#AdamW.zero_grad'].filter((n) => ranges.some((r) => r.label === n))));
  for (const r of ranges) expect(r.end).toBeGreaterThanOrEqual(r.start);
  // The optimizer steps fall inside the optimizer phases.
  const steps = ranges.filter((r) => r.label === 'Optimizer.step#AdamW.step');
  expect(steps.length).toBeGreaterThan(0);
  for (const s of steps) expect(phases.some((p) => p.label.endsWith('optimizer') && s.start >= p.start - 1 && s.end <= p.end + 1)).toBe(true);
});

test('a trace without times has no time axis; hostile annotations are passed over', () => {
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(join(FIXTURES, 'train_gpt2-n12__default.pickle.gz')), { details: true });
  const { stream } = replaySnapshot(snapshot, { trace: traces[0]! });
  const times = requestTimes(stream, undefined);
  expect(times).toBeNull();
  const t = requestTimes(stream, traces[0]!.details)!;
  const junk = [null, 3, 'x', { name: 5, time_us: 1 }, { name: 'a', time_us: 'soon' }, { stage: 'END', name: 'never began', time_us: t[10] }, { stage: 'START', name: 'open', time_us: t[5] }];
  expect(timelineAnnotations(stream, undefined, junk, 0, t, () => new Int32Array(0))).toEqual([{ start: 5, end: stream.length - 1, label: 'open', kind: 'range' }]);
});
