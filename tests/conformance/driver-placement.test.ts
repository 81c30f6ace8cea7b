// Conformance: the driver placement model puts every recorded cudaMalloc where the real driver did.
// Each reference trace's segment_alloc / segment_free sequence is replayed through DriverPlacement;
// where the model misses, the segment is moved to its recorded address (release + occupy) so that
// one miss does not shift everything after it, and the misses are compared with the known ones.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'fflate';
import { describe, expect, test } from 'vitest';
import { DriverPlacement, inferRegionTop } from '../../src/allocator/placement/driver-placement';
import { readPickle, type PickleDict, type PickleValue } from '../../src/trace/pickle/pickle-reader';

const FIXTURES = join(__dirname, '../fixtures');
/** Too big to parse on every run; the smaller traces cover the same rules. */
const BIG = new Set(['random-s3__default.pickle.gz', 'train_gpt2-n150__default.pickle.gz']);

// Misses the model cannot avoid, by index into the trace's segment_alloc/segment_free events.
// Synthetic traces: another mapping of the process (a host mmap: the misses start right after the
// memory-history buffer doubles at 2^13 or 2^14 trace entries) took the top of a free range, so the
// driver put the chunk lower or skipped the range. train_gpt2: recording began after model creation,
// so where the address space was free at the start is unknown (the first dozen), and the history
// buffer's growth at 2^10..2^14 entries lands below the lowest chunk and pushes later ones down.
const KNOWN_MISSES: Record<string, number[]> = {
  'random-s1__garbage_collection_threshold=0.6+max_split_size_mb=256.pickle.gz': [
    278, 478, 691, 694, 702, 728, 778, 786, 804, 810, 852, 950, 951, 955, 956, 957, 958, 965, 966, 967,
    968, 970, 975, 977, 986, 1102, 1111, 1119,
  ],
  'transformer-s1__garbage_collection_threshold=0.6+max_split_size_mb=256.pickle.gz': [
    1186, 1210, 1211, 1242, 1243, 1244, 1253, 1305, 1306, 1321, 1322, 1328, 1385, 1407, 1468, 1546, 1564,
    1568, 1572, 1576, 1580,
  ],
  'transformer-s1__max_split_size_mb=128.pickle.gz': [
    626, 627, 630, 631, 634, 635, 638, 639, 642, 643, 646, 647, 650, 652, 653, 655, 657, 659, 661, 663,
  ],
  'train_gpt2-n12__default.pickle.gz': [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 57, 58, 166, 201, 202, 203, 204],
  'train_gpt2-n12__max_split_size_mb=128.pickle.gz': [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 57, 58, 227],
  // Creating a second CUDA stream takes room in the driver's first region, so the first segments
  // land elsewhere (0, 2-5); the 512 MiB segments (46, 66), as in the next trace, go lower than the
  // free space right below the lowest chunk, to a 512 MiB boundary: a rule seen only in these two
  // recordings (random-s1__default's 512 MiB segment follows the usual one).
  'random-s1__default__two_streams.pickle.gz': [0, 2, 3, 4, 5, 46, 66, 131, 268],
  'random-s1__default__empty_cache.pickle.gz': [35, 43, 61, 63],
};

interface SegmentEvent {
  alloc: boolean;
  addr: number;
  size: number;
}

const dict = (v: PickleValue | undefined): PickleDict => v as PickleDict;
const list = (v: PickleValue | undefined): PickleValue[] => v as PickleValue[];
const num = (v: PickleValue | undefined): number => Number(v as number | bigint);

function loadSegments(file: string): { events: SegmentEvent[]; preexisting: { addr: number; size: number }[] } {
  const snapshot = dict(readPickle(gunzipSync(readFileSync(join(FIXTURES, file)))));
  const events: SegmentEvent[] = [];
  for (const e of list(list(snapshot['device_traces'])[0])) {
    const action = dict(e)['action'];
    if (action === 'segment_alloc' || action === 'segment_free') {
      events.push({ alloc: action === 'segment_alloc', addr: num(dict(e)['addr']), size: num(dict(e)['size']) });
    }
  }
  // Segments alive at the end that no event made existed before the recording began.
  const made = new Set(events.filter((e) => e.alloc).map((e) => e.addr));
  const preexisting = list(snapshot['segments'])
    .map((s) => ({ addr: num(dict(s)['address']), size: num(dict(s)['total_size']) }))
    .filter((s) => !made.has(s.addr));
  return { events, preexisting };
}

// Two devices of one process share its address space, and each device's trace shows only its own
// segments: their placement cannot be replayed from one trace.
const files = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.pickle.gz') && !f.includes('expandable_segments') && !f.includes('two_devices') && !BIG.has(f))
  .sort();

describe('driver placement reproduces the recorded segment addresses', () => {
  test('there are reference traces to check', () => {
    expect(files.length).toBeGreaterThanOrEqual(20);
  });

  test.each(files)('%s', (file) => {
    const { events, preexisting } = loadSegments(file);
    const allocs = events.filter((e) => e.alloc);
    const regionTop = inferRegionTop(allocs, preexisting);
    if (preexisting.length === 0) expect(regionTop).toBeDefined();
    const driver = new DriverPlacement(regionTop !== undefined ? { regionTop } : {});
    for (const s of preexisting) driver.occupy(s.addr, s.size);

    const misses: number[] = [];
    events.forEach((e, i) => {
      if (!e.alloc) return driver.release(e.addr);
      const addr = driver.place(e.size);
      if (addr === e.addr) return;
      misses.push(i);
      driver.release(addr);
      driver.occupy(e.addr, e.size);
    });
    expect(misses).toEqual(KNOWN_MISSES[file] ?? []);
  });
});

describe('DriverPlacement', () => {
  const MiB = 1024 * 1024;
  const top = 0x7f00_0000_0000;

  test('first small segments take the region slots, big ones go below the region, top down', () => {
    const d = new DriverPlacement({ regionTop: top });
    expect(d.place(2 * MiB)).toBe(top - 98 * MiB);
    expect(d.place(20 * MiB)).toBe(top - 24 * MiB);
    expect(d.place(118 * MiB)).toBe(top - 640 * MiB);
    expect(d.place(222 * MiB)).toBe(top - 864 * MiB);
    // Spare room of the newest chunk, at the bottom of its smallest fitting gap.
    expect(d.place(2 * MiB)).toBe(top - 642 * MiB);
  });

  test('a freed chunk is reused at the top of the highest range with 32 MiB to spare, never an exact fit', () => {
    const d = new DriverPlacement({ regionTop: top });
    const a = d.place(64 * MiB); // [top-576, top-512)
    const b = d.place(96 * MiB); // [top-672, top-576)
    d.place(32 * MiB); // keeps b's range from joining fresh space
    d.release(b);
    expect(d.place(64 * MiB)).toBe(top - 640 * MiB); // 96 >= 64 + 32: at the top of b's range
    d.release(a);
    expect(d.place(64 * MiB)).not.toBe(a); // a's 64 MiB alone is an exact fit
    expect(inferRegionTop([{ addr: top - 98 * MiB, size: 2 * MiB }])).toBe(top);
    expect(inferRegionTop([{ addr: top - 24 * MiB, size: 24 * MiB }])).toBe(top);
  });
});
