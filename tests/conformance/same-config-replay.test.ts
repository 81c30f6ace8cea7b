// Conformance: replaying each reference trace under its own config, with the recorded segment addresses,
// reproduces the recorded device trace event for event and the final stats. Lab traces replay under the
// cap they ran under; real programs' snapshots with nothing but the file: a per_process_memory_fraction
// key, a recorded OOM, the program's own empty_cache() calls, deferred frees and private pools all come
// from the snapshot itself.
import { describe, expect, test } from 'vitest';
import { ACTION_NAMES } from '../../src/allocator/trace-action';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import type { Snapshot } from '../../src/trace/snapshot/snapshot';
import { capacityOf, CATEGORIES_MANIFEST, FRAMEWORKS_MANIFEST, loadRealTrace, loadTrace, MANIFEST, MICROBATCH_MANIFEST, REAL_MANIFEST, SIZES_MANIFEST, type ManifestTrace } from './reference-traces';

const real = REAL_MANIFEST.filter((t) => !t.segments_only && !t.no_history);
/** Recordings the replay does not yet reproduce, each with the reason where it is checked. */

describe('same-config replay reproduces the recording', () => {
  test('there are reference traces to check', () => {
    expect(MANIFEST.length).toBeGreaterThanOrEqual(20);
    expect(MANIFEST.filter((t) => t.conf.includes('expandable_segments')).length).toBeGreaterThanOrEqual(7);
    expect(MANIFEST.filter((t) => t.empty_cache_after?.length).length).toBeGreaterThanOrEqual(2);
    expect(MANIFEST.some((t) => t.source1)).toBe(true);
    expect(MANIFEST.filter((t) => /large_segment_size_mb|per_process_memory_fraction/.test(t.conf)).length).toBeGreaterThanOrEqual(4);
    // ../shared/traces-real and the real programs recorded beside them.
    for (const w of ['compiled', 'oom', 'prefetch', 'resnet', 'ring', 'graphs', 'phases', 'llama']) expect(real.some((t) => t.workload === w)).toBe(true);
  });

  const cases = [
    ...MANIFEST.flatMap((t) => [[t.file, t, 0, false] as const, ...(t.source1 ? [[`${t.file}, device 1`, t, 1, false] as const] : [])]),
    ...real.map((t) => [`real/${t.file}`, t, 0, true] as const),
    ...SIZES_MANIFEST.map((t) => [`sizes/${t.file}`, t, 0, true] as const),
    ...FRAMEWORKS_MANIFEST.map((t) => [`frameworks/${t.file}`, t, 0, true] as const),
    ...CATEGORIES_MANIFEST.map((t) => [`categories/${t.file}`, t, 0, true] as const),
    ...MICROBATCH_MANIFEST.map((t) => [`microbatch/${t.file}`, t, 0, true] as const),
  ];
  test.each(cases)('%s', (name, trace, device, isReal) => {
    const inFolder = /^(sizes|frameworks|categories|microbatch)\//.test(name);
    const snapshot: Snapshot = inFolder ? loadTrace(name) : isReal ? loadRealTrace(trace.file) : loadTrace(trace.file);
    // The lab recordings and the sizes' capped runs ran under set_per_process_memory_fraction, which a
    // snapshot does not record (a run that only retried shows an interval, not the cap); a
    // per_process_memory_fraction key is in the recorded config, and real programs need no help (the
    // framework programs' capped runs, phase 2, carry theirs).
    const capped = !isReal || name.startsWith('sizes/') || name.startsWith('frameworks/');
    const capacity = capped && !trace.conf.includes('per_process_memory_fraction') ? capacityOf(trace) : undefined;
    const run = replaySnapshot(snapshot, { addresses: 'recorded', device, ...(capacity ? { capacity } : {}) });
    const recorded = snapshot.device_traces[device]!.filter((e) => e.action !== 'snapshot');
    const { events } = run.result;
    // The file holds the entries the manifest counts ('snapshot' markers too: an out-of-memory observer's).
    if (device === 0) expect(snapshot.device_traces[0]!.length).toBe(trace.trace_events);

    // Event by event: action, address, size, stream (an oom: action and size).
    const mismatches: string[] = [];
    const n = Math.max(recorded.length, events.length);
    for (let i = 0; i < n && mismatches.length < 5; i++) {
      const want = recorded[i];
      const action = i < events.length ? ACTION_NAMES[events.action[i]!] : undefined;
      const same =
        want !== undefined &&
        action === want.action &&
        events.size[i] === want.size &&
        events.stream[i] === want.stream &&
        (action === 'oom' || events.addr[i] === want.addr);
      if (!same) {
        mismatches.push(`#${i}: recorded ${JSON.stringify({ ...want, frames: undefined })}, replayed ${i < events.length ? JSON.stringify(events.entry(i)) : 'nothing'}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(run.result.divergences).toEqual([]);
    expect(run.result.problems).toEqual([]);

    // Final stats. A trace that begins mid-run cannot know peaks and totals from before it began:
    // for those, the current values (and the device alloc count, which includes the adopted segments;
    // not for expandable segments, whose mapped ranges may have taken any number of maps).
    const midRun = run.stream.initialSegments.length > 0;
    const expandable = trace.conf.includes('expandable_segments');
    const statsAtEnd = device === 0 ? trace.stats_at_end : trace.stats_at_end_device1!;
    // The framework recordings reset the peaks after each optimizer step: their events are the check.
    if (!statsAtEnd) return;
    // An empty_cache() that freed nothing leaves no trace: the recording synchronized once more per such
    // call. The lab recordings list their calls; a real program's (torch.cuda.graph calls one on entering)
    // are unknown, so its sync count cannot be checked.
    const unseenCalls = device === 0 ? (trace.empty_cache_after?.length ?? 0) - run.stream.recordedEmptyCache.length : 0;
    for (const [key, value] of Object.entries(statsAtEnd)) {
      if (midRun && !key.endsWith('.current') && (key !== 'num_device_alloc' || expandable)) continue;
      if (isReal && key === 'num_sync_all_streams') continue;
      // The categories' programs reset the peaks after each optimizer step (as the framework ones do).
      if (name.startsWith('categories/') && key.endsWith('.peak')) continue;
      const want = key === 'num_sync_all_streams' ? value - unseenCalls : value;
      expect([key, run.result.stats[key]]).toEqual([key, want]);
    }
    // num_ooms counts the OOMs PyTorch caught (cuDNN workspaces) with those the program saw.
    expect(run.result.ooms.length + run.result.caught.length).toBe(statsAtEnd['num_ooms']);
  });
});

test('the recording\'s own empty_cache() calls are found where they freed segments', () => {
  const withCalls = (t: ManifestTrace): boolean => (t.empty_cache_after?.length ?? 0) > 0;
  for (const trace of MANIFEST.filter(withCalls)) {
    const run = replaySnapshot(loadTrace(trace.file), { statsOnly: true, until: -1 });
    // Every call found is one the recording made; the ones not found freed nothing (12001, right after 12000).
    expect([...run.stream.recordedEmptyCache].every((i) => trace.empty_cache_after!.includes(i))).toBe(true);
    expect(run.stream.recordedEmptyCache.length).toBeGreaterThanOrEqual(trace.empty_cache_after!.length - 1);
  }
  const phases = replaySnapshot(loadRealTrace('phases.pickle.gz'), { statsOnly: true, until: -1 });
  expect(phases.stream.recordedEmptyCache.length).toBe(3); // after each phase, each right before an allocation
});
