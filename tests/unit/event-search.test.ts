// The search box's query language, stepping between matches, the event list's entry -> request map,
// and the entries' compile_context / user_metadata read by the fast path as the generic reader has them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { stepInSorted as nextMatch } from '../../src/lib/binary-search';
import { eventRows, requestOfEntries } from '../../src/trace/measures/event-rows';
import { parseSearch } from '../../src/trace/measures/event-search';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile, decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { gunzipSync } from 'node:zlib';
import { readPickle } from '../../src/trace/pickle/pickle-reader';
import { TraceRows } from '../../src/trace/snapshot/trace-rows';
import { FIXTURES } from '../conformance/reference-traces';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

describe('search queries', () => {
  test.each([
    ['0x7f248f140007', { kind: 'address', address: 0x7f248f140007 }],
    ['139936644726784', { kind: 'address', address: 139936644726784 }],
    ['>1GiB', { kind: 'size', min: GiB + 1, max: Infinity }],
    ['>= 2 MB', { kind: 'size', min: 2 * MiB, max: Infinity }],
    ['<512', { kind: 'size', min: 0, max: 511 }],
    ['64MB..100MB', { kind: 'size', min: 64 * MiB, max: 100 * MiB }],
    ['1.5GiB-1GiB', { kind: 'size', min: GiB, max: 1.5 * GiB }],
    ['20MiB', { kind: 'size', min: 20 * MiB, max: 20 * MiB }],
    ['Cross_Entropy', { kind: 'text', text: 'cross_entropy' }],
    ['modeling_gpt2.py:282', { kind: 'text', text: 'modeling_gpt2.py:282' }],
    ['4096', { kind: 'text', text: '4096' }],
  ])('%s', (input, want) => expect(parseSearch(input)).toEqual(want));

  test('an empty query is none', () => expect(parseSearch('   ')).toBeNull());
});

test('stepping between matches wraps around and skips the cursor itself', () => {
  const m = Int32Array.from([3, 10, 20]);
  expect(nextMatch(m, 0, 1)).toBe(3);
  expect(nextMatch(m, 3, 1)).toBe(10);
  expect(nextMatch(m, 20, 1)).toBe(3);
  expect(nextMatch(m, 10, -1)).toBe(3);
  expect(nextMatch(m, 3, -1)).toBe(20);
  expect(nextMatch(m, 15, -1)).toBe(10);
  expect(nextMatch(new Int32Array(0), 5, 1)).toBeNull();
});

test("every entry maps to the last request made from it or before it", () => {
  const bytes = readFileSync(join(FIXTURES, 'train_gpt2-n12__default.pickle.gz'));
  const { snapshot, traces } = decodeSnapshotForReplay(bytes, { details: true });
  const { stream } = replaySnapshot(snapshot, { trace: traces[0]! });
  const trace = traces[0]!;
  const requestOf = requestOfEntries(stream, trace.length);
  for (let i = 0; i < stream.length; i++) expect(requestOf[stream.source[i]!]).toBe(i);
  for (let e = 1; e < trace.length; e++) expect(requestOf[e]!).toBeGreaterThanOrEqual(requestOf[e - 1]!);
  const rows = eventRows(trace, requestOf, trace.length - 3, 10);
  expect(rows.map((r) => r.entry)).toEqual([trace.length - 3, trace.length - 2, trace.length - 1]);
  const entries = decodeSnapshotFile(bytes).device_traces[0]!;
  expect(rows.map((r) => [r.action, r.addr, r.size, r.time])).toEqual(entries.slice(-3).map((e) => [e.action, e.addr, e.size, e.time_us]));
  expect(rows[0]!.since).toBe(entries.at(-3)!.time_us! - entries[0]!.time_us!);
});

test("user_metadata and compile_context come through the fast path as the generic reader has them", () => {
  const bytes = readFileSync(join(FIXTURES, 'job/annotated.pickle.gz'));
  const fast = decodeSnapshotForReplay(bytes, { details: true }).traces[0]!.details!.context;
  const entries = decodeSnapshotFile(bytes).device_traces[0]!;
  const want = new Map<number, Record<string, string>>();
  entries.forEach((e, i) => {
    const c: Record<string, string> = {};
    if (e.compile_context && e.compile_context !== 'N/A') c['compile_context'] = e.compile_context;
    if (e.user_metadata) c['user_metadata'] = e.user_metadata;
    if (Object.keys(c).length) want.set(i, c);
  });
  expect(want.size).toBeGreaterThan(0);
  expect(new Map(fast)).toEqual(want);
  // The fast path did the reading, and kept them.
  const rows = new TraceRows(1 << 20, true);
  readPickle(gunzipSync(bytes), { fastPath: rows });
  expect(rows.columns.length).toBe(entries.length);
  expect(rows.columns.details!.context.size).toBe(want.size);
});
