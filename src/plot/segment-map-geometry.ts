// Where the segment map puts every segment and block, and which block lies under a point. Pure
// (no DOM, no WebGPU) so that it is tested in Node and shared by the WebGPU and Canvas 2D paths.
//
// Segments are grouped into lanes by (pool, stream); within a lane they are packed side by side in
// address order like words in a paragraph, wrapping into rows of `rowBytes`. x is bytes from the
// row's start (one ruler for every lane, so widths compare across lanes); y is CSS pixels and does
// not zoom: the fit picks `rowBytes` so that every row fits the plot's height.
import type { MemoryLayout } from '../trace/measures/memory-layout';
import { upperBound } from '../lib/binary-search';

export interface SegmentMapMetrics {
  /** Height of one row of segments, CSS px. */
  rowHeight: number;
  rowGap: number;
  /** Room above a lane's rows for its label. */
  headerHeight: number;
  laneGap: number;
}

export const DEFAULT_METRICS: SegmentMapMetrics = Object.freeze({ rowHeight: 24, rowGap: 6, headerHeight: 18, laneGap: 8 });

/** Gap between packed segments, as a fraction of the row: a few pixels before zooming. */
const GAP_FRACTION = 0.003;

export interface Lane {
  small: boolean;
  stream: number;
  /** 0: the default pools; else a private pool's index into the layout's poolNames. */
  pool: number;
  /** A private pool's name, '' for the default pools. */
  poolName: string;
  firstSegment: number;
  endSegment: number;
  firstRow: number;
  endRow: number;
  /** Gap between the lane's segments, bytes. */
  gapBytes: number;
  /** Top of the lane's header (its label), px. */
  top: number;
  bytes: number;
}

export interface SegmentMapGeometry {
  rowBytes: number;
  metrics: SegmentMapMetrics;
  lanes: Lane[];
  /** Top of each row, px, increasing. */
  rowTop: Float64Array;
  /** First segment of each row; one more entry than rows (the end). */
  rowFirstSegment: Int32Array;
  /** Byte offset of each segment from its row's start. */
  segmentX: Float64Array;
  segmentRow: Int32Array;
  /** Total height, px. */
  height: number;
}

export function laneLabel(lane: Lane): string {
  // PyTorch names a side stream by its handle, a large number: said to be one.
  const stream = lane.stream === 0 ? 'stream 0' : `side stream (handle ${lane.stream})`;
  const pool = `${lane.small ? 'small' : 'large'} pool · ${stream}`;
  return lane.poolName ? `${lane.poolName} · ${pool}` : pool;
}

/**
 * A few pixels before zooming, but at most a fifth of the lane's mean segment: gaps of thousands of
 * segments must not outgrow the bytes. Whole bytes keep every offset an exact integer.
 */
function laneGap(layout: MemoryLayout, first: number, rowBytes: number): number {
  let bytes = 0;
  let end = first;
  for (
    ;
    end < layout.segmentSize.length &&
    layout.segmentSmall[end] === layout.segmentSmall[first] &&
    layout.segmentStream[end] === layout.segmentStream[first] &&
    layout.segmentPool[end] === layout.segmentPool[first];
    end++
  ) {
    bytes += layout.segmentSize[end]!;
  }
  return Math.ceil(Math.min(rowBytes * GAP_FRACTION, (0.2 * bytes) / (end - first)));
}

/** Packs the layout's segments into rows of `rowBytes` (at least its largest segment). */
export function packSegments(layout: MemoryLayout, rowBytes: number, metrics: SegmentMapMetrics = DEFAULT_METRICS): SegmentMapGeometry {
  const n = layout.segmentAddr.length;
  let largest = 0;
  for (let s = 0; s < n; s++) largest = Math.max(largest, layout.segmentSize[s]!);
  rowBytes = Math.max(rowBytes, largest, 1);
  const segmentX = new Float64Array(n);
  const segmentRow = new Int32Array(n);
  const rowTops: number[] = [];
  const rowFirst: number[] = [];
  const lanes: Lane[] = [];
  let y = 0;
  let x = 0;
  for (let s = 0; s < n; s++) {
    const size = layout.segmentSize[s]!;
    const small = layout.segmentSmall[s] === 1;
    const stream = layout.segmentStream[s]!;
    const pool = layout.segmentPool[s]!;
    let lane = lanes[lanes.length - 1];
    if (!lane || lane.small !== small || lane.stream !== stream || lane.pool !== pool) {
      if (lane) {
        lane.endSegment = s;
        lane.endRow = rowTops.length;
        y += metrics.rowHeight + metrics.laneGap;
      }
      lane = { small, stream, pool, poolName: layout.poolNames[pool] ?? '', firstSegment: s, endSegment: n, firstRow: rowTops.length, endRow: 0, gapBytes: laneGap(layout, s, rowBytes), top: y, bytes: 0 };
      lanes.push(lane);
      y += metrics.headerHeight;
      rowTops.push(y);
      rowFirst.push(s);
      x = 0;
    } else if (x > 0 && x + size > rowBytes) {
      y += metrics.rowHeight + metrics.rowGap;
      rowTops.push(y);
      rowFirst.push(s);
      x = 0;
    }
    lane.bytes += size;
    segmentX[s] = x;
    segmentRow[s] = rowTops.length - 1;
    x += size + lane.gapBytes;
  }
  const last = lanes[lanes.length - 1];
  if (last) {
    last.endRow = rowTops.length;
    y += metrics.rowHeight;
  }
  rowFirst.push(n);
  return {
    rowBytes,
    metrics,
    lanes,
    rowTop: Float64Array.from(rowTops),
    rowFirstSegment: Int32Array.from(rowFirst),
    segmentX,
    segmentRow,
    height: y,
  };
}

/**
 * The packing that fits `height` px with the fewest bytes per row (so segments are as wide as
 * they can be); rows get thinner, down to 4 px, when even one row per lane does not fit.
 */
export function fitSegmentMap(layout: MemoryLayout, height: number, metrics: SegmentMapMetrics = DEFAULT_METRICS): SegmentMapGeometry {
  let total = 0;
  let largest = 1;
  for (let s = 0; s < layout.segmentSize.length; s++) {
    total += layout.segmentSize[s]!;
    largest = Math.max(largest, layout.segmentSize[s]!);
  }
  const rowsThatFit = Math.max(1, Math.floor(height / (metrics.rowHeight + metrics.rowGap)));
  let rowBytes = Math.max(largest, total / rowsThatFit);
  let geometry = packSegments(layout, rowBytes, metrics);
  // Each step widens rows by 10%: at most a few dozen packings of (usually few) segments.
  while (geometry.height > height && geometry.rowTop.length > geometry.lanes.length && rowBytes < 2 * total) {
    rowBytes *= 1.1;
    geometry = packSegments(layout, rowBytes, metrics);
  }
  if (geometry.height > height && geometry.lanes.length > 0) {
    const scale = Math.max(height / geometry.height, 4 / metrics.rowHeight);
    const thin: SegmentMapMetrics = {
      rowHeight: metrics.rowHeight * scale,
      rowGap: metrics.rowGap * scale,
      headerHeight: Math.max(12, metrics.headerHeight * scale),
      laneGap: metrics.laneGap * scale,
    };
    geometry = packSegments(layout, rowBytes, thin);
  }
  return geometry;
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export function segmentRect(g: SegmentMapGeometry, layout: MemoryLayout, s: number): Rect {
  return { x: g.segmentX[s]!, y: g.rowTop[g.segmentRow[s]!]!, w: layout.segmentSize[s]!, h: g.metrics.rowHeight };
}

/** The segment that holds block `b` (blocks of a segment are contiguous). */
export function segmentOfBlock(layout: MemoryLayout, b: number): number {
  return upperBound(layout.segmentFirstBlock, b) - 1;
}

export function blockRect(g: SegmentMapGeometry, layout: MemoryLayout, b: number, s: number = segmentOfBlock(layout, b)): Rect {
  return {
    x: g.segmentX[s]! + layout.blockAddr[b]! - layout.segmentAddr[s]!,
    y: g.rowTop[g.segmentRow[s]!]!,
    w: layout.blockSize[b]!,
    h: g.metrics.rowHeight,
  };
}

function endBlock(layout: MemoryLayout, s: number): number {
  return s + 1 < layout.segmentFirstBlock.length ? layout.segmentFirstBlock[s + 1]! : layout.blockAddr.length;
}

/** The row at `y` px, or -1 between rows. */
export function rowAt(g: SegmentMapGeometry, y: number): number {
  const r = upperBound(g.rowTop, y) - 1;
  return r >= 0 && y < g.rowTop[r]! + g.metrics.rowHeight ? r : -1;
}

/** The block under (x bytes into the row, y px), or -1. */
export function pickBlock(g: SegmentMapGeometry, layout: MemoryLayout, x: number, y: number): number {
  const r = rowAt(g, y);
  if (r < 0) return -1;
  const s = upperBound(g.segmentX, x, g.rowFirstSegment[r]!, g.rowFirstSegment[r + 1]!) - 1;
  if (s < g.rowFirstSegment[r]! || x >= g.segmentX[s]! + layout.segmentSize[s]!) return -1;
  const addr = layout.segmentAddr[s]! + (x - g.segmentX[s]!);
  return upperBound(layout.blockAddr, addr, layout.segmentFirstBlock[s]!, endBlock(layout, s)) - 1;
}

/** Segments [s0, s1) and blocks [b0, b1) of row `r` that reach into bytes [xMin, xMax]. */
export function visibleInRow(g: SegmentMapGeometry, layout: MemoryLayout, r: number, xMin: number, xMax: number): [number, number, number, number] {
  const first = g.rowFirstSegment[r]!;
  const end = g.rowFirstSegment[r + 1]!;
  let s0 = Math.max(first, upperBound(g.segmentX, xMin, first, end) - 1);
  if (s0 < end && g.segmentX[s0]! + layout.segmentSize[s0]! < xMin) s0++;
  const s1 = upperBound(g.segmentX, xMax, s0, end);
  if (s0 >= s1) return [s0, s0, 0, 0];
  const b0 = Math.max(
    layout.segmentFirstBlock[s0]!,
    upperBound(layout.blockAddr, layout.segmentAddr[s0]! + (xMin - g.segmentX[s0]!), layout.segmentFirstBlock[s0]!, endBlock(layout, s0)) - 1,
  );
  const last = s1 - 1;
  const b1 = upperBound(layout.blockAddr, layout.segmentAddr[last]! + (xMax - g.segmentX[last]!), layout.segmentFirstBlock[last]!, endBlock(layout, last));
  return [s0, s1, b0, b1];
}

// ---- Instances: one per segment (the band behind its blocks), then one per block ----

/** Floats per instance: x hi, x lo (bytes, split so that f32 keeps deep zooms exact), width, top, height, flags. */
export const INSTANCE_WORDS = 6;
export const FLAG_OVERSIZE = 16;
export const FLAG_SEGMENT = 32;
/** A block a selection marks (a stack view's frame, a search's match): with any marked, the rest are dimmed. */
export const FLAG_MARKED = 64;
/** Colour index of a segment's band (after the four block states). */
export const BAND_COLOR = 4;

/** Instance data: segments at [0, segments), blocks at segments + block index. `marked`: per block, 1 if marked. */
export function fillInstances(g: SegmentMapGeometry, layout: MemoryLayout, marked: Uint8Array | null = null): ArrayBuffer {
  const ns = layout.segmentAddr.length;
  const nb = layout.blockAddr.length;
  const buffer = new ArrayBuffer((ns + nb) * INSTANCE_WORDS * 4);
  const f = new Float32Array(buffer);
  const u = new Uint32Array(buffer);
  const h = g.metrics.rowHeight;
  const put = (i: number, x: number, w: number, y: number, flags: number): void => writeInstance(f, u, i, x, w, y, h, flags);
  for (let s = 0; s < ns; s++) {
    const y = g.rowTop[g.segmentRow[s]!]!;
    const x = g.segmentX[s]!;
    const base = layout.segmentAddr[s]!;
    put(s, x, layout.segmentSize[s]!, y, FLAG_SEGMENT | BAND_COLOR);
    for (let b = layout.segmentFirstBlock[s]!, end = endBlock(layout, s); b < end; b++) {
      put(ns + b, x + layout.blockAddr[b]! - base, layout.blockSize[b]!, y, blockFlags(layout, b, marked));
    }
  }
  return buffer;
}

/** `data` (fillInstances' of `layout`) with each block's flags written again for `marked`: the same
 * rectangles, other marks (a new selection needs no new packing). */
export function withMarks(data: ArrayBuffer, layout: MemoryLayout, marked: Uint8Array | null): ArrayBuffer {
  const out = data.slice(0);
  const u = new Uint32Array(out);
  const ns = layout.segmentAddr.length;
  for (let b = 0; b < layout.blockAddr.length; b++) u[(ns + b) * INSTANCE_WORDS + 5] = blockFlags(layout, b, marked);
  return out;
}

function blockFlags(layout: MemoryLayout, b: number, marked: Uint8Array | null): number {
  return layout.blockState[b]! | (layout.blockOversize[b] ? FLAG_OVERSIZE : 0) | (marked?.[b] ? FLAG_MARKED : 0);
}

/** Instance `i`: x split into a float32 and its remainder (bytes past 2^24 need both), width, row top, height, flags. */
function writeInstance(f: Float32Array, u: Uint32Array, i: number, x: number, w: number, y: number, h: number, flags: number): void {
  const o = i * INSTANCE_WORDS;
  const hi = Math.fround(x);
  f[o] = hi;
  f[o + 1] = x - hi;
  f[o + 2] = w;
  f[o + 3] = y;
  f[o + 4] = h;
  u[o + 5] = flags;
}

/** Instance ranges [first, count] to draw for the bytes [xMin, xMax] of every row: segments first, then blocks. */
export function visibleRanges(g: SegmentMapGeometry, layout: MemoryLayout, xMin: number, xMax: number): { segments: [number, number][]; blocks: [number, number][] } {
  const ns = layout.segmentAddr.length;
  const segments: [number, number][] = [];
  const blocks: [number, number][] = [];
  for (let r = 0; r < g.rowTop.length; r++) {
    const [s0, s1, b0, b1] = visibleInRow(g, layout, r, xMin, xMax);
    if (s1 <= s0) continue;
    segments.push([s0, s1 - s0]);
    if (b1 > b0) blocks.push([ns + b0, b1 - b0]);
  }
  return { segments, blocks };
}

/**
 * A coarser set of instances for zoomed-out views, where many blocks share a pixel: inside each
 * segment, runs of blocks smaller than `binBytes` merge into rectangles of about `binBytes`, coloured
 * by the state that holds most of their bytes; larger blocks stay as they are. With bins of at most a
 * pixel this looks like the full set, at a fraction of the vertices (a million blocks: ~20k).
 */
export function lodInstances(g: SegmentMapGeometry, layout: MemoryLayout, binBytes: number, marked: Uint8Array | null = null): { data: ArrayBuffer; count: number } {
  const ns = layout.segmentAddr.length;
  // At most one instance per segment and per block: written straight into the final layout, then trimmed.
  const capacity = ns + layout.blockAddr.length;
  const data = new ArrayBuffer(capacity * INSTANCE_WORDS * 4);
  const f = new Float32Array(data);
  const u = new Uint32Array(data);
  const h = g.metrics.rowHeight;
  let count = 0;
  const put = (x: number, w: number, y: number, flags: number): void => writeInstance(f, u, count++, x, w, y, h, flags);
  const stateBytes = new Float64Array(4);
  // A merged run is marked when any block in it is: a match stays visible zoomed out.
  let runMarked = 0;
  for (let s = 0; s < ns; s++) {
    const y = g.rowTop[g.segmentRow[s]!]!;
    const x = g.segmentX[s]! - layout.segmentAddr[s]!;
    put(g.segmentX[s]!, layout.segmentSize[s]!, y, FLAG_SEGMENT | BAND_COLOR);
    let runStart = -1;
    let runEnd = -1;
    for (let b = layout.segmentFirstBlock[s]!, end = endBlock(layout, s); b <= end; b++) {
      const last = b === end;
      const size = last ? 0 : layout.blockSize[b]!;
      // A run ends at the segment's end, before a large block, or once it fills a bin.
      if (runStart >= 0 && (last || size >= binBytes || runEnd - runStart >= binBytes)) {
        let state = 0;
        for (let k = 1; k < 4; k++) if (stateBytes[k]! > stateBytes[state]!) state = k;
        put(x + runStart, runEnd - runStart, y, state | runMarked);
        stateBytes.fill(0);
        runStart = -1;
        runMarked = 0;
      }
      if (last) break;
      const addr = layout.blockAddr[b]!;
      if (size >= binBytes) {
        put(x + addr, size, y, blockFlags(layout, b, marked));
        continue;
      }
      if (marked?.[b]) runMarked = FLAG_MARKED;
      if (runStart < 0) runStart = addr;
      runEnd = addr + size;
      stateBytes[layout.blockState[b]!]! += size;
    }
  }
  return { data: data.slice(0, count * INSTANCE_WORDS * 4), count };
}
