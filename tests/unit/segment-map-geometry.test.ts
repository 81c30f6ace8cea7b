// The segment map's geometry: lanes by pool and stream, blocks inside their segment's band, no
// overlaps, and CPU picking that finds the block under a point.
import { describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import {
  blockRect,
  fillInstances,
  withMarks,
  fitSegmentMap,
  FLAG_SEGMENT,
  INSTANCE_WORDS,
  lodInstances,
  packSegments,
  pickBlock,
  segmentOfBlock,
  segmentRect,
  visibleRanges,
  type SegmentMapGeometry,
} from '../../src/plot/segment-map-geometry';
import { memoryLayout, type MemoryLayout } from '../../src/trace/measures/memory-layout';
import { replay } from '../../src/trace/replay/replay';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { transformerTraining } from '../../src/trace/stream/workloads';

function layoutAt(cursorFraction: number, conf = DEFAULT_CONFIG): { layout: MemoryLayout; cursor: number } {
  const full = transformerTraining.generate({ steps: 3 });
  const cursor = Math.floor(full.length * cursorFraction);
  // A prefix of the stream is the program up to the cursor.
  const stream = { ...full, length: cursor + 1 };
  const allocIndex = new Int32Array(stream.idCount).fill(-1);
  for (let i = 0; i <= cursor; i++) if (stream.kind[i] === RequestKind.alloc) allocIndex[stream.id[i]!] = i;
  const { allocator } = replay(stream, { config: conf });
  return { layout: memoryLayout(allocator, (id) => allocIndex[id]!), cursor };
}

const { layout } = layoutAt(0.6);
const small = layoutAt(0.6, { ...DEFAULT_CONFIG, maxSplitSize: 64 * 2 ** 20 }).layout;

function checkGeometry(g: SegmentMapGeometry, l: MemoryLayout): void {
  // Lanes: contiguous segments of one (pool, stream), large pool first, rows inside the lane.
  for (const lane of g.lanes) {
    for (let s = lane.firstSegment; s < lane.endSegment; s++) {
      expect(l.segmentSmall[s] === 1).toBe(lane.small);
      expect(l.segmentStream[s]).toBe(lane.stream);
      expect(g.segmentRow[s]).toBeGreaterThanOrEqual(lane.firstRow);
      expect(g.segmentRow[s]).toBeLessThan(lane.endRow);
      expect(g.rowTop[g.segmentRow[s]!]).toBeGreaterThan(lane.top);
    }
  }
  expect(g.lanes.map((lane) => lane.small)).toEqual([...g.lanes.map((lane) => lane.small)].sort());
  // Segments in a row: inside the row, in address order, apart.
  for (let r = 0; r < g.rowTop.length; r++) {
    for (let s = g.rowFirstSegment[r]!; s < g.rowFirstSegment[r + 1]!; s++) {
      const rect = segmentRect(g, l, s);
      expect(rect.x).toBeGreaterThanOrEqual(0);
      expect(rect.x + rect.w).toBeLessThanOrEqual(g.rowBytes * (1 + 1e-12));
      if (s > g.rowFirstSegment[r]!) expect(rect.x).toBeGreaterThan(g.segmentX[s - 1]! + l.segmentSize[s - 1]!);
    }
  }
  for (let r = 1; r < g.rowTop.length; r++) expect(g.rowTop[r]).toBeGreaterThanOrEqual(g.rowTop[r - 1]! + g.metrics.rowHeight);
  // Blocks: inside their segment's band, tiling it without overlap.
  for (let s = 0; s < l.segmentAddr.length; s++) {
    const band = segmentRect(g, l, s);
    let x = band.x;
    const end = s + 1 < l.segmentAddr.length ? l.segmentFirstBlock[s + 1]! : l.blockAddr.length;
    for (let b = l.segmentFirstBlock[s]!; b < end; b++) {
      const r = blockRect(g, l, b);
      expect(segmentOfBlock(l, b)).toBe(s);
      expect(r.y).toBe(band.y);
      expect(r.h).toBe(band.h);
      expect(r.x).toBe(x);
      x = r.x + r.w;
    }
    expect(x).toBe(band.x + band.w);
  }
}

describe('segment map geometry', () => {
  test('the workload leaves a layout worth drawing', () => {
    expect(layout.segmentAddr.length).toBeGreaterThan(10);
    expect(layout.blockAddr.length).toBeGreaterThan(layout.segmentAddr.length);
    expect(layout.segmentSmall).toContain(1);
    expect(layout.segmentSmall).toContain(0);
    expect(small.blockOversize).toContain(1);
  });

  test('every block inside its band, no overlaps, lanes by pool and stream', () => {
    for (const l of [layout, small]) {
      checkGeometry(fitSegmentMap(l, 400), l);
      checkGeometry(packSegments(l, 0), l); // rows as narrow as the largest segment
    }
  });

  test('two streams make two lanes per pool', () => {
    const l = structuredClone(layout);
    const half = Math.floor(l.segmentAddr.length / 4);
    // Streams must stay sorted within a pool: give the first large segments stream 0, the rest stream 7.
    for (let s = half; s < l.segmentAddr.length && l.segmentSmall[s] === 0; s++) l.segmentStream[s] = 7;
    const g = fitSegmentMap(l, 400);
    expect(g.lanes.map((lane) => [lane.small, lane.stream])).toEqual([
      [false, 0],
      [false, 7],
      [true, 0],
    ]);
    checkGeometry(g, l);
  });

  test('the fit fills the height without overflowing it', () => {
    for (const height of [120, 300, 800]) {
      const g = fitSegmentMap(layout, height);
      expect(g.height).toBeLessThanOrEqual(height);
    }
    // More height, more rows and so narrower rows (wider segments).
    expect(fitSegmentMap(layout, 800).rowBytes).toBeLessThanOrEqual(fitSegmentMap(layout, 200).rowBytes);
  });

  test('picking finds the block under a point, and nothing between rows or segments', () => {
    const g = fitSegmentMap(layout, 400);
    for (let b = 0; b < layout.blockAddr.length; b++) {
      const r = blockRect(g, layout, b);
      expect(pickBlock(g, layout, r.x + r.w / 2, r.y + r.h / 2)).toBe(b);
      expect(pickBlock(g, layout, r.x, r.y)).toBe(b);
      expect(pickBlock(g, layout, r.x + r.w - 0.5, r.y + r.h - 0.01)).toBe(b);
    }
    const first = segmentRect(g, layout, 0);
    expect(pickBlock(g, layout, first.x + first.w + g.lanes[0]!.gapBytes / 2, first.y + 1)).toBe(-1);
    expect(pickBlock(g, layout, first.x + 1, first.y - 1)).toBe(-1);
    expect(pickBlock(g, layout, first.x + 1, first.y + first.h + 0.5)).toBe(-1);
    expect(pickBlock(g, layout, -1, first.y + 1)).toBe(-1);
  });

  test('instances: one band per segment, then one per block, with exact hi + lo offsets', () => {
    const g = fitSegmentMap(layout, 400);
    const data = fillInstances(g, layout);
    const f = new Float32Array(data);
    const u = new Uint32Array(data);
    const ns = layout.segmentAddr.length;
    expect(f.length).toBe((ns + layout.blockAddr.length) * INSTANCE_WORDS);
    for (let s = 0; s < ns; s++) expect(u[s * INSTANCE_WORDS + 5]! & FLAG_SEGMENT).toBe(FLAG_SEGMENT);
    for (let b = 0; b < layout.blockAddr.length; b++) {
      const o = (ns + b) * INSTANCE_WORDS;
      expect(f[o]! + f[o + 1]!).toBeCloseTo(blockRect(g, layout, b).x, 0);
      expect(u[o + 5]! & 15).toBe(layout.blockState[b]);
    }
  });

  test('other marks on the same instances: their flags written again, the same as instances filled with them', () => {
    const g = fitSegmentMap(layout, 400);
    const marked = new Uint8Array(layout.blockAddr.length).map((_, b) => (b % 3 === 0 ? 1 : 0));
    const plain = fillInstances(g, layout);
    expect(new Uint32Array(withMarks(plain, layout, marked))).toEqual(new Uint32Array(fillInstances(g, layout, marked)));
    expect(new Uint32Array(withMarks(fillInstances(g, layout, marked), layout, null))).toEqual(new Uint32Array(plain));
  });

  test('culling keeps exactly the blocks that reach into the visible bytes', () => {
    const g = fitSegmentMap(layout, 400);
    const ns = layout.segmentAddr.length;
    for (const [xMin, xMax] of [
      [0, g.rowBytes],
      [g.rowBytes * 0.3, g.rowBytes * 0.35],
      [g.rowBytes * 0.9, g.rowBytes * 2],
    ] as const) {
      const drawn = new Set<number>();
      for (const [first, count] of visibleRanges(g, layout, xMin, xMax).blocks) for (let i = first; i < first + count; i++) drawn.add(i - ns);
      for (let b = 0; b < layout.blockAddr.length; b++) {
        const r = blockRect(g, layout, b);
        const visible = r.x + r.w >= xMin && r.x <= xMax;
        if (visible) expect(drawn.has(b)).toBe(true);
      }
      // Nothing far outside is drawn (a block may touch the edge).
      for (const b of drawn) {
        const r = blockRect(g, layout, b);
        expect(r.x + r.w).toBeGreaterThanOrEqual(xMin);
        expect(r.x).toBeLessThanOrEqual(xMax);
      }
    }
  });
});

describe('level of detail', () => {
  test('merged rectangles tile each segment, fewer than the blocks, exact when bins are tiny', () => {
    const g = fitSegmentMap(layout, 400);
    const ns = layout.segmentAddr.length;
    for (const bin of [1, 2 ** 20, 2 ** 24]) {
      const { data, count } = lodInstances(g, layout, bin);
      const f = new Float32Array(data);
      const u = new Uint32Array(data);
      const covered = new Float64Array(ns);
      let blocks = 0;
      let seg = -1;
      let x = 0;
      for (let i = 0; i < count; i++) {
        const o = i * INSTANCE_WORDS;
        const left = f[o]! + f[o + 1]!;
        if (u[o + 5]! & FLAG_SEGMENT) {
          seg++;
          expect(left).toBeCloseTo(g.segmentX[seg]!, 0);
          x = left;
          continue;
        }
        blocks++;
        expect(left).toBeCloseTo(x, 0); // contiguous, no overlap
        x = left + f[o + 2]!;
        covered[seg] = covered[seg]! + f[o + 2]!;
      }
      expect(seg).toBe(ns - 1);
      for (let s = 0; s < ns; s++) expect(covered[s]).toBe(layout.segmentSize[s]);
      if (bin === 1) expect(blocks).toBe(layout.blockAddr.length);
      else expect(blocks).toBeLessThan(layout.blockAddr.length);
    }
  });
});
