// Conformance: replaying each reference trace under its own config, with the recorded segment addresses
// and the recorded memory cap, reproduces the recorded device trace event for event and the final stats.
import { describe, expect, test } from 'vitest';
import { ACTION_NAMES } from '../../src/allocator/trace-sink';
import { replaySnapshot } from '../../src/trace/replay-snapshot';
import { capacityOf, loadTrace, MANIFEST } from './reference-traces';

const traces = MANIFEST;

describe('same-config replay reproduces the recording', () => {
  test('there are reference traces to check', () => {
    expect(traces.length).toBeGreaterThanOrEqual(20);
    expect(traces.filter((t) => t.conf.includes('expandable_segments')).length).toBe(3);
  });

  test.each(traces.map((t) => [t.file, t] as const))('%s', (_file, trace) => {
    const snapshot = loadTrace(trace.file);
    const capacity = capacityOf(trace);
    const run = replaySnapshot(snapshot, { addresses: 'recorded', ...(capacity ? { capacity } : {}) });
    const recorded = snapshot.device_traces[0]!.filter((e) => e.action !== 'snapshot');
    const { events } = run.result;
    expect(recorded.length).toBe(trace.trace_events);

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
    for (const [key, want] of Object.entries(trace.stats_at_end)) {
      if (midRun && !key.endsWith('.current') && (key !== 'num_device_alloc' || expandable)) continue;
      expect([key, run.result.stats[key]]).toEqual([key, want]);
    }
    expect(run.result.ooms.length).toBe(trace.stats_at_end['num_ooms']);
  });
});
