// The smallest cap a run fits under (what --fit says the first failing size needs): steps from the
// need an OOM reports, proven where the cap refused nothing before it, and is the smallest to 2 MiB.
import { describe, expect, it } from 'vitest';
import { MiB } from '../../src/allocator/constants';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { replay, type ReplayOptions } from '../../src/trace/replay/replay';
import { smallestCap } from '../../src/trace/sweep/memory-needed';
import { TensorTracker } from '../../src/trace/stream/workloads/tensor-tracker';
import { WORKLOADS } from '../../src/trace/stream/workloads';
import type { RequestStream } from '../../src/trace/stream/request-stream';

const oomsUnder = (stream: RequestStream, options: ReplayOptions, bytes: number): number =>
  replay(stream, { ...options, capacity: { kind: 'fraction', bytes }, statsOnly: true, untilOom: true }).ooms.length;

describe('smallestCap', () => {
  it('is the need the OOM reports where the cap refused nothing before it: reserved after the release plus the segment', () => {
    const t = new TensorTracker();
    t.alloc(20 * MiB);
    const b = t.alloc(40 * MiB);
    t.free(b);
    t.alloc(30 * MiB);
    const stream = t.finish('two large blocks');
    const options: ReplayOptions = { config: parseAllocConf('').config, addresses: 'simulated' };
    const run = replay(stream, { ...options, capacity: { kind: 'fraction', bytes: 50 * MiB }, statsOnly: true });
    expect(run.ooms[0]).toMatchObject({ request: 1, capNeeded: 60 * MiB, capRefusedBefore: false });
    expect(smallestCap(stream, options, 50 * MiB)).toBe(60 * MiB);
  });

  it('runs under what it finds and out under 2 MiB less, on every built-in workload under three configs', () => {
    let tried = 0;
    for (const w of WORKLOADS) {
      const stream = w.generate({});
      for (const conf of ['', 'expandable_segments:True', 'max_split_size_mb:64']) {
        const options: ReplayOptions = { config: parseAllocConf(conf).config, addresses: 'simulated' };
        const { stats } = replay(stream, { ...options, statsOnly: true });
        // A cap halfway between the peaks, which runs out on most: the size past the largest that fits.
        const cap = Math.round((stats['allocated_bytes.all.peak']! + stats['reserved_bytes.all.peak']!) / 2);
        if (oomsUnder(stream, options, cap) === 0) continue;
        tried++;
        const needs = smallestCap(stream, options, cap)!;
        expect(needs, `${w.id} ${conf}`).toBeGreaterThan(cap);
        expect(needs, `${w.id} ${conf}`).toBeLessThanOrEqual(stats['reserved_bytes.all.peak']!);
        expect(oomsUnder(stream, options, needs), `${w.id} ${conf}`).toBe(0);
        expect(oomsUnder(stream, options, needs - 2 * MiB), `${w.id} ${conf}`).toBeGreaterThan(0);
      }
    }
    expect(tried).toBeGreaterThanOrEqual(5);
  });

  it('with garbage_collection_threshold (the cap changes what is freed before any refusal) bisects up to the peak, null where that does not fit', () => {
    const stream = WORKLOADS[0]!.generate({});
    const options: ReplayOptions = { config: parseAllocConf('garbage_collection_threshold:0.6').config, addresses: 'simulated' };
    const { stats } = replay(stream, { ...options, statsOnly: true });
    const cap = stats['allocated_bytes.all.peak']!;
    const needs = smallestCap(stream, options, cap);
    if (needs !== null) {
      expect(oomsUnder(stream, options, needs)).toBe(0);
      expect(oomsUnder(stream, options, needs - 2 * MiB)).toBeGreaterThan(0);
    } else expect(oomsUnder(stream, options, stats['reserved_bytes.all.peak']!)).toBeGreaterThan(0);
  });
});
