// A recorded-address replay puts each segment where the recording did, unless that range is taken by
// a live segment: then the next recorded address of that size, else the driver model's (a miss).
import { describe, expect, test } from 'vitest';
import { CachingAllocator } from '../../src/allocator/caching-allocator';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { DriverPlacement } from '../../src/allocator/placement/driver-placement';
import { RecordedPlacement, type PlacementMiss } from '../../src/allocator/placement/recorded-placement';

const MiB = 2 ** 20;
const BASE = 0x7f00_0000_0000;

function placement(recorded: { addr: number; size: number }[]): { p: RecordedPlacement; misses: PlacementMiss[] } {
  const misses: PlacementMiss[] = [];
  return { p: new RecordedPlacement(recorded, new DriverPlacement(), (m) => misses.push(m)), misses };
}

describe('RecordedPlacement', () => {
  // A live 4 MiB segment at BASE + 4 MiB; each case asks for 2 MiB at a recorded address, with a
  // free second recorded address at BASE + 64 MiB.
  const cases: [string, number, boolean][] = [
    ['ends where the live one starts', BASE + 2 * MiB, true],
    ['overlaps its start', BASE + 3 * MiB, false],
    ['lies inside it', BASE + 5 * MiB, false],
    ['overlaps its end', BASE + 7 * MiB, false],
    ['starts where it ends', BASE + 8 * MiB, true],
  ];
  test.each(cases)('a recorded range that %s is %s', (_, addr, free) => {
    const { p, misses } = placement([
      { addr, size: 2 * MiB },
      { addr: BASE + 64 * MiB, size: 2 * MiB },
    ]);
    p.occupy(BASE + 4 * MiB, 4 * MiB);
    expect(p.place(2 * MiB)).toBe(free ? addr : BASE + 64 * MiB);
    expect(misses).toEqual([]);
  });

  test('a recorded range that contains a live segment is passed over', () => {
    const { p } = placement([
      { addr: BASE, size: 20 * MiB },
      { addr: BASE + 64 * MiB, size: 20 * MiB },
    ]);
    p.occupy(BASE + 4 * MiB, 2 * MiB);
    p.occupy(BASE + 30 * MiB, 2 * MiB);
    expect(p.place(20 * MiB)).toBe(BASE + 64 * MiB);
  });

  test('a released segment frees its range; with no recorded address left the driver model places it', () => {
    const { p, misses } = placement([
      { addr: BASE, size: 2 * MiB },
      { addr: BASE + MiB, size: 2 * MiB },
    ]);
    expect(p.place(2 * MiB)).toBe(BASE);
    p.release(BASE);
    expect(p.place(2 * MiB)).toBe(BASE + MiB);
    const third = p.place(2 * MiB);
    expect(misses).toEqual([{ size: 2 * MiB, addr: third }]);
    expect(third + 2 * MiB <= BASE || third >= BASE + 3 * MiB).toBe(true);
  });
});

describe('a segment adopted before the trace began', () => {
  test('is refused where it overlaps one adopted already, containing it included', () => {
    const allocator = new CachingAllocator({ config: DEFAULT_CONFIG, placement: new DriverPlacement() });
    allocator.adoptSegment(BASE + 4 * MiB, 2 * MiB, 0, false);
    expect(() => allocator.adoptSegment(BASE, 20 * MiB, 0, false)).toThrow(/overlaps the segment at/);
    expect(() => allocator.adoptSegment(BASE + 5 * MiB, 2 * MiB, 0, false)).toThrow(/overlaps the segment at/);
    expect(() => allocator.adoptSegment(BASE + 6 * MiB, 2 * MiB, 0, false)).not.toThrow();
  });
});

test('the driver model puts spare room in the newest chunk that has it, after most chunks were given back', () => {
  // 200 chunks of 32 MiB, each with a 20 MiB segment (12 MiB spare); 150 given back, so their slots
  // are compacted away. A 10 MiB segment goes to the newest chunk left, the next one to the one before.
  const d = new DriverPlacement();
  const segments = Array.from({ length: 200 }, () => d.place(20 * MiB));
  const kept = segments.filter((_, i) => i % 4 === 1);
  for (const [i, addr] of segments.entries()) if (i % 4 !== 1) d.release(addr);
  expect(d.place(10 * MiB)).toBe(kept.at(-1)! + 20 * MiB);
  expect(d.place(10 * MiB)).toBe(kept.at(-2)! + 20 * MiB);
  // A 2 MiB one fits the newest chunk's 2 MiB left.
  expect(d.place(2 * MiB)).toBe(kept.at(-1)! + 30 * MiB);
});


test("a segment the driver model is told of goes into the spare room of the chunk around it, not a chunk of its own", () => {
  const d = new DriverPlacement();
  d.place(24 * MiB); // the driver's region's 24 MiB of room
  const a = d.place(20 * MiB); // a 32 MiB chunk: [a, a + 20 MiB) taken, 12 MiB spare
  d.occupy(a + 24 * MiB, 4 * MiB);
  // That chunk's gaps are now 4 MiB at a + 20 and 4 MiB at a + 28: the lowest of the smallest.
  expect(d.place(4 * MiB)).toBe(a + 20 * MiB);
  expect(d.place(4 * MiB)).toBe(a + 28 * MiB);
});
