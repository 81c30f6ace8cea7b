// Conformance: replaying each reference trace under its own config, with the recorded segment addresses
// and the recorded memory cap, reproduces the recorded device trace event for event and the final stats.
import { describe, expect, test } from 'vitest';
import { ACTION_NAMES } from '../../src/allocator/trace-action';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { capacityOf, loadTrace, MANIFEST } from './reference-traces';

const traces = MANIFEST;

describe('same-config replay reproduces the recording', () => {
  test('there are reference traces to check', () => {
    expect(traces.length).toBeGreaterThanOrEqual(20);
    expect(traces.filter((t) => t.conf.includes('expandable_segments')).length).toBeGreaterThanOrEqual(7);
    expect(traces.filter((t) => t.empty_cache_after?.length).length).toBeGreaterThanOrEqual(2);
    expect(traces.some((t) => t.source1)).toBe(true);
  });

  const cases = traces.flatMap((t) => [
    [t.file, t, 0] as const,
    ...(t.source1 ? [[`${t.file}, device 1`, t, 1] as const] : []),
  ]);
  test.each(cases)('%s', (_name, trace, device) => {
    const snapshot = loadTrace(trace.file);
    const capacity = capacityOf(trace);
    const run = replaySnapshot(snapshot, {
      addresses: 'recorded',
      device,
      ...(capacity ? { capacity } : {}),
      // The recording's empty_cache() calls (on device 0) leave no event of their own.
      ...(trace.empty_cache_after && device === 0 ? { emptyCacheAfter: trace.empty_cache_after } : {}),
    });
    const recorded = snapshot.device_traces[device]!.filter((e) => e.action !== 'snapshot');
    const { events } = run.result;
    if (device === 0) expect(recorded.length).toBe(trace.trace_events);

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
        mismatches.push(`#${i}: recorded ${JSON.stringify(want)}, replayed ${i < events.length ? JSON.stringify(events.entry(i)) : 'nothing'}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(run.result.divergences).toEqual([]);

    // Final stats. A trace that begins mid-run cannot know peaks and totals from before it began:
    // for those, the current values (and the device alloc count, which includes the adopted segments;
    // not for expandable segments, whose mapped ranges may have taken any number of maps).
    const midRun = run.stream.initialSegments.length > 0;
    const expandable = trace.conf.includes('expandable_segments');
    const statsAtEnd = device === 0 ? trace.stats_at_end : trace.stats_at_end_device1!;
    for (const [key, want] of Object.entries(statsAtEnd)) {
      if (midRun && !key.endsWith('.current') && (key !== 'num_device_alloc' || expandable)) continue;
      expect([key, run.result.stats[key]]).toEqual([key, want]);
    }
    expect(run.result.ooms.length).toBe(statsAtEnd['num_ooms']);
  });
});
