// Random request streams through the allocator model: after every step the structure stays sound
// and every stat equals a recount from the blocks (DESIGN.md, Testing).
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Block } from '../../src/allocator/block';
import { CachingAllocator } from '../../src/allocator/caching-allocator';
import type { SegmentPlacement } from '../../src/allocator/placement/segment-placement';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { GiB, MiB } from '../../src/allocator/constants';
import { roundSize } from '../../src/allocator/sizes';

/** Segments (and expandable segments' ranges) side by side, 32 MiB apart, never reused: placement is
 * not under test here. */
function bumpPlacement(): SegmentPlacement {
  let next = 2 ** 40;
  const place = (size: number): number => {
    const addr = next;
    next += Math.ceil(size / (32 * MiB) + 1) * 32 * MiB;
    return addr;
  };
  return { place, release: () => {}, reserve: place, unreserve: () => {} };
}

type Op = { kind: 'alloc'; size: number; stream: number } | { kind: 'free'; pick: number } | { kind: 'empty_cache' };

const sizeArb = fc.oneof(
  fc.integer({ min: 1, max: 4096 }),
  fc.integer({ min: 4097, max: 1024 * 1024 + 4096 }),
  fc.integer({ min: MiB, max: 64 * MiB }),
  fc.integer({ min: 64 * MiB, max: 700 * MiB }),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('alloc' as const), size: sizeArb, stream: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('free' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty_cache' as const }) },
);
const confArb = fc.constantFrom(
  '',
  'max_split_size_mb:20',
  'max_split_size_mb:128',
  'max_split_size_mb:64,max_non_split_rounding_mb:40',
  'roundup_power2_divisions:4',
  'roundup_power2_divisions:[1:2,64:8,>:4],max_split_size_mb:256',
  'garbage_collection_threshold:0.5,max_split_size_mb:100',
  'garbage_collection_threshold:0.8',
  'expandable_segments:True',
  'expandable_segments:True,max_split_size_mb:64',
  'expandable_segments:True,garbage_collection_threshold:0.5,roundup_power2_divisions:4',
);

function checkInvariants(a: CachingAllocator, live: Block[]): void {
  let reserved = 0;
  let allocated = 0;
  let requested = 0;
  let inactiveSplit = 0;
  let inactiveSplitBytes = 0;
  const free = new Set(a.freeBlocks());
  const segments = a.segmentsByAddress();
  for (let i = 1; i < segments.length; i++) {
    expect(segments[i - 1]!.addr + segments[i - 1]!.size).toBeLessThanOrEqual(segments[i]!.addr);
  }
  for (const seg of segments) {
    reserved += seg.size;
    // A segment starts at its first block, or (expandable) where a mapped range follows unmapped space.
    if (seg.expandable) expect(seg.head.prev === null || !seg.head.prev.mapped).toBe(true);
    else expect(seg.head.prev).toBeNull();
    let addr = seg.addr;
    for (let b: Block | null = seg.head; b?.mapped; b = b.next) {
      expect(b.addr).toBe(addr); // blocks tile their segment
      expect(b.segment).toBe(seg.segment);
      if (b.next) expect(b.next.prev).toBe(b);
      addr += b.size;
      if (seg.expandable) {
        // Mappings are whole pages.
        const page = seg.segment.pageSize;
        expect((seg.addr - seg.segment.addr) % page).toBe(0);
        expect(seg.size % page).toBe(0);
      }
      if (b.allocated) {
        allocated += b.size;
        requested += b.requestedSize;
        expect(free.has(b)).toBe(false);
      } else {
        expect(free.has(b)).toBe(true);
        // No two adjacent free blocks.
        expect(b.next === null || b.next.allocated || !b.next.mapped).toBe(true);
        if (b.isSplit() && !seg.expandable) {
          inactiveSplit++;
          inactiveSplitBytes += b.size;
        }
      }
    }
    expect(addr).toBe(seg.addr + seg.size);
  }
  const cudaMalloced = segments.filter((s) => !s.expandable).length;
  expect(free.size).toBe(a.freeBlocks().length);
  for (const b of free) expect(a.segments.get(b.segment.addr)).toBe(b.segment);
  const s = a.memoryStats();
  expect(s['reserved_bytes.all.current']).toBe(reserved);
  expect(a.reservedBytes).toBe(reserved);
  expect(s['allocated_bytes.all.current']).toBe(allocated);
  expect(s['active_bytes.all.current']).toBe(allocated);
  expect(s['requested_bytes.all.current']).toBe(requested);
  expect(s['allocation.all.current']).toBe(live.length);
  expect(s['segment.all.current']).toBe(cudaMalloced);
  expect(s['inactive_split.all.current']).toBe(inactiveSplit);
  expect(s['inactive_split_bytes.all.current']).toBe(inactiveSplitBytes);
  expect(s['allocated_bytes.small_pool.current']! + s['allocated_bytes.large_pool.current']!).toBe(allocated);
  expect(s['reserved_bytes.all.peak']).toBeGreaterThanOrEqual(reserved);
  if (!a.config.expandableSegments) expect(s['num_device_alloc']! - s['num_device_free']!).toBe(segments.length);
}

describe('allocator invariants over random request streams', () => {
  test('hold after every step, for any config and capacity', () => {
    fc.assert(
      fc.property(
        confArb,
        fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        fc.array(opArb, { minLength: 1, maxLength: 300 }),
        (conf, capGiB, ops) => {
          const config = parseAllocConf(conf).config;
          const a = new CachingAllocator({
            config,
            placement: bumpPlacement(),
            ...(capGiB ? { capacity: { kind: 'fraction' as const, bytes: capGiB * GiB } } : {}),
          });
          const live: Block[] = [];
          let ooms = 0;
          for (const op of ops) {
            if (op.kind === 'alloc') {
              const b = a.malloc(op.size, op.stream);
              if (b) {
                expect(b.size).toBeGreaterThanOrEqual(roundSize(op.size, config));
                expect(b.stream).toBe(op.stream);
                live.push(b);
              } else {
                ooms++;
                expect(a.lastOom!.message).toMatch(/^CUDA out of memory\. Tried to allocate /);
              }
            } else if (op.kind === 'free' && live.length > 0) {
              a.free(live.splice(op.pick % live.length, 1)[0]!);
            } else if (op.kind === 'empty_cache') {
              a.emptyCache();
              // Nothing cached survives except free pieces of segments still in use (for expandable
              // segments, pieces of pages still in use).
              for (const b of a.freeBlocks()) {
                expect(b.isSplit()).toBe(true);
                if (b.segment.expandable) expect(b.size).toBeLessThan(2 * b.segment.pageSize);
              }
            }
            checkInvariants(a, live);
          }
          expect(a.memoryStats()['num_ooms']).toBe(ooms);
        },
      ),
      { numRuns: 300 },
    );
  });
});
