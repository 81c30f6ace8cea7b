// The segment map: every segment of the allocator at the cursor as a band, its blocks coloured by
// state, grouped into lanes by pool and stream. The canvas is drawn by SegmentMapRenderer (WebGPU, or
// Canvas 2D without an adapter) once per animation frame, outside React renders; d3 draws the byte
// ruler and lane labels in an SVG overlay and owns zoom and pan (x only: rows always fit the height).
import { hex } from '../lib/hex';
import { registerDrawWait } from '../state/draw-sync';
import { axisTop, scaleLinear, select, zoom, zoomIdentity, type ZoomBehavior, type ZoomTransform } from 'd3';
import { useCallback, useEffect, useId, useRef, useState, type JSX } from 'react';
import { formatSize } from '../allocator/format-size';
import { blockRect, fitSegmentMap, laneLabel, pickBlock, segmentOfBlock, type SegmentMapGeometry } from '../plot/segment-map-geometry';
import { PALETTE } from '../gpu/segment-map/segment-map-palette';
import { SegmentMapRenderer, type SegmentMapBackend } from '../gpu/segment-map/segment-map-renderer';
import { BLOCK_STATE_NAMES, type MemoryLayout } from '../trace/measures/memory-layout';
import type { MapZoom } from '../state/link-schema';
import { registerExportableMap } from './segment-map-export';
import { setChanged } from './set-changed';
import './segment-map.css';

export interface SegmentMapProps {
  layout: MemoryLayout | null;
  /** Request index the layout is at (block age = cursor - blockSince). */
  cursor: number;
  /** Stack frames of an allocation, when the trace has them. */
  frames?: (blockId: number) => Promise<string[]>;
  /** The zoom to show (from a link); the map reports the user's zooms through onZoom once each ends. */
  zoom?: MapZoom | null;
  onZoom?(zoom: MapZoom | null): void;
  /** The allocation (request id) pinned (from a link); the map reports pins through onPin. */
  pinned?: number | null;
  onPin?(id: number | null): void;
  /** Which blocks of `layout` a selection marks (a stack view's frame, a search, a category); the others are dimmed. */
  marked?: BlockMarks | null;
}

/** Whether block `b` of `layout` is marked. */
export type BlockMark = (layout: MemoryLayout, b: number) => boolean;

/** The blocks of one layout a selection marks: 1 per marked block, and how many. */
export interface BlockMarks {
  layout: MemoryLayout;
  blocks: Uint8Array;
  count: number;
}

/** `mark` applied to every block of `layout`, once (the map and the counts beside it share it). */
export function blockMarks(layout: MemoryLayout, mark: BlockMark): BlockMarks {
  const blocks = new Uint8Array(layout.blockAddr.length);
  let count = 0;
  for (let b = 0; b < blocks.length; b++) if (mark(layout, b)) (blocks[b] = 1), count++;
  return { layout, blocks, count };
}

/** The marks of `layout` (none when they belong to another), the count on the canvas as data-marked (for tests and scripts). */
function marksFor(layout: MemoryLayout, marked: BlockMarks | null, canvas: HTMLCanvasElement | null): Uint8Array | null {
  const m = marked?.layout === layout ? marked : null;
  if (canvas) {
    if (m) canvas.dataset.marked = String(m.count);
    else delete canvas.dataset.marked;
  }
  return m?.blocks ?? null;
}

/** Height of the byte ruler above the canvas, px. */
const AXIS_HEIGHT = 24;

/** Set for the page's life once the browser destroyed a map's WebGPU device (it cannot show a WebGPU
 * canvas here): every map after draws on Canvas 2D. */
let cannotPresent = false;
/** How near an edge a ruler label is anchored at its end, not its middle, px (half the widest label's width). */
const EDGE_LABEL_PX = 40;
/** The deepest zoom shows 512 bytes (PyTorch's smallest block) this wide, px. */
const MIN_BLOCK_PX_AT_MAX_ZOOM = 40;

interface Tip {
  block: number;
  /** Pointer position in the plot, px. */
  x: number;
  y: number;
  pinned: boolean;
}

/** Power-of-two steps: byte offsets read as round binary sizes (256 MiB, 512 MiB ...). */
function byteTicks(a: number, b: number, count: number): number[] {
  const step = 2 ** Math.max(0, Math.ceil(Math.log2(Math.max((b - a) / Math.max(count, 1), 1))));
  const ticks: number[] = [];
  for (let t = Math.ceil(a / step) * step; t <= b && ticks.length < 100; t += step) ticks.push(t);
  return ticks;
}

const tickLabel = (bytes: number): string => formatSize(bytes).replace('.00 ', ' ');

/** Whether a link's zoom is the one shown (to within a pixel). */
const sameZoom = (z: MapZoom, t: ZoomTransform, width: number): boolean =>
  Math.abs(z.k - t.k) < 1e-6 && Math.abs(z.x * width - t.x) < 1;

export function SegmentMap({ layout, cursor, frames, zoom: wantedZoom = null, onZoom, pinned = null, onPin, marked = null }: SegmentMapProps): JSX.Element {
  const plotRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const svgRef = useRef<SVGSVGElement>(null);
  const rendererRef = useRef<SegmentMapRenderer | null>(null);
  const geometryRef = useRef<SegmentMapGeometry | null>(null);
  const layoutRef = useRef<MemoryLayout | null>(layout);
  const markedRef = useRef<BlockMarks | null>(marked);
  const transformRef = useRef<ZoomTransform>(zoomIdentity);
  const zoomRef = useRef<ZoomBehavior<HTMLCanvasElement, unknown> | null>(null);
  const sizeRef = useRef({ width: 0, height: 0 });
  /** What the ruler and the lane labels last drew (they are rewritten only when that changes). */
  const axisWidthRef = useRef(0);
  const lanesKeyRef = useRef('');
  const tipRef = useRef<Tip | null>(null);
  const [tip, setTipState] = useState<Tip | null>(null);
  const [backend, setBackend] = useState<SegmentMapBackend | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [canvasKey, setCanvasKey] = useState(0);
  const hintId = useId();

  // The latest props for callbacks made once (d3 handlers, effects that must not rerun).
  const linkRef = useRef({ wantedZoom, onZoom, pinned, onPin });
  linkRef.current = { wantedZoom, onZoom, pinned, onPin };

  const setTip = useCallback((next: Tip | null) => {
    const wasPinned = tipRef.current?.pinned ?? false;
    tipRef.current = next;
    setTipState(next);
    // Pins and unpins go to the link (a hover tip is not a pin).
    if (!next?.pinned && !wasPinned) return;
    const id = next?.pinned ? (layoutRef.current?.blockId[next.block] ?? -1) : -1;
    const report = id >= 0 ? id : null;
    if (report !== linkRef.current.pinned) linkRef.current.onPin?.(report);
  }, []);

  /** Bytes per CSS px and the byte offset at the left edge, from the zoom. */
  const scale = useCallback(() => {
    const g = geometryRef.current;
    const { width } = sizeRef.current;
    const t = transformRef.current;
    const pxPerByte = g && width > 0 ? (t.k * width) / g.rowBytes : 1;
    return { pxPerByte, x0: -t.x / pxPerByte };
  }, []);

  /** Canvas view, ruler and highlight for the current zoom; no React render. */
  const paint = useCallback(() => {
    const g = geometryRef.current;
    const l = layoutRef.current;
    const svg = svgRef.current;
    const { width, height } = sizeRef.current;
    if (!svg || width === 0) return;
    const { pxPerByte, x0 } = scale();
    rendererRef.current?.setView({ x0, pxPerByte, width, height, dpr: window.devicePixelRatio || 1 });
    const root = select(svg);
    const x1 = x0 + width / pxPerByte;
    const axis = root.select<SVGGElement>('g.segment-map-axis');
    // Rewritten only when the range shown changes: a new layout seldom moves it (see set-changed.ts).
    const domain = g && l ? `${x0},${x1}` : '';
    if ((axis.attr('data-domain') ?? '') !== domain || axisWidthRef.current !== width) {
      axisWidthRef.current = width;
      if (g && l) {
        const xScale = scaleLinear().domain([x0, x1]).range([0, width]);
        const ticks = byteTicks(x0, x1, Math.floor(width / 110));
        axis.attr('data-domain', domain).call(axisTop(xScale).tickValues(ticks).tickFormat((d) => tickLabel(d as number)).tickSizeOuter(0));
        // A label at an edge reads inward, not cut in half ("0 bytes" at the left edge showed as "ytes").
        axis.selectAll<SVGTextElement, number>('.tick text').attr('text-anchor', (d) => (xScale(d) < EDGE_LABEL_PX ? 'start' : xScale(d) > width - EDGE_LABEL_PX ? 'end' : 'middle'));
      } else {
        axis.attr('data-domain', null).selectAll('*').remove();
      }
    }
    const highlight = svg.querySelector('rect.segment-map-highlight');
    const t = tipRef.current;
    if (g && l && t && t.block < l.blockAddr.length) {
      const r = blockRect(g, l, t.block);
      const left = Math.max(-4, (r.x - x0) * pxPerByte);
      const right = Math.min(width + 4, (r.x + r.w - x0) * pxPerByte);
      setChanged(highlight, 'display', null);
      setChanged(highlight, 'x', left - 1.5);
      setChanged(highlight, 'y', AXIS_HEIGHT + r.y - 1.5);
      setChanged(highlight, 'width', Math.max(right - left, 1) + 3);
      setChanged(highlight, 'height', r.h + 3);
    } else {
      setChanged(highlight, 'display', 'none');
    }
  }, [scale]);

  /** New layout or new plot size: pack the rows again, redraw the lane labels. */
  const relayout = useCallback(() => {
    const l = layoutRef.current;
    const { width, height } = sizeRef.current;
    const svg = svgRef.current;
    if (!svg || width === 0) return;
    const g = l ? fitSegmentMap(l, height) : null;
    geometryRef.current = g;
    if (g && l) rendererRef.current?.setScene(g, l, marksFor(l, markedRef.current, canvasRef.current));
    // The lanes' labels, rewritten only when they change (a new layout often has the same lanes).
    const lanes = (g?.lanes ?? []).map((d) => ({ y: AXIS_HEIGHT + d.top + Math.min(13, g!.metrics.headerHeight - 2), text: `${laneLabel(d)} · ${d.endSegment - d.firstSegment} segments · ${formatSize(d.bytes)}` }));
    const lanesKey = JSON.stringify(lanes);
    if (lanesKeyRef.current !== lanesKey) {
      lanesKeyRef.current = lanesKey;
      select(svg)
        .select<SVGGElement>('g.segment-map-lanes')
        .selectAll<SVGTextElement, (typeof lanes)[number]>('text')
        .data(lanes)
        .join('text')
        .attr('x', 4)
        .attr('y', (d) => d.y)
        .text((d) => d.text);
    }
    const z = zoomRef.current;
    const canvas = canvasRef.current;
    if (z && canvas && g) {
      z.extent([
        [0, 0],
        [width, height],
      ])
        .translateExtent([
          [0, 0],
          [width, height],
        ])
        .scaleExtent([1, Math.max(1, (MIN_BLOCK_PX_AT_MAX_ZOOM * g.rowBytes) / (512 * width))]);
      // A zoom from a link, once the map has a size; else re-apply so the constraints hold for the new extent.
      const wanted = linkRef.current.wantedZoom;
      const t = wanted && !sameZoom(wanted, transformRef.current, width) ? zoomIdentity.translate(wanted.x * width, 0).scale(wanted.k) : transformRef.current;
      z.transform(select(canvas), t);
      pinFromLink();
    }
    paint();
  }, [paint]);

  /** Pins the allocation a link names, when the layout has it and nothing is pinned. */
  const pinFromLink = useCallback(() => {
    const g = geometryRef.current;
    const l = layoutRef.current;
    const id = linkRef.current.pinned;
    if (!g || !l || id === null || (tipRef.current?.pinned && l.blockId[tipRef.current.block] === id)) return;
    const block = l.blockId.indexOf(id);
    if (block < 0) return;
    const r = blockRect(g, l, block);
    const { pxPerByte, x0 } = scale();
    const left = Math.max(0, Math.min(sizeRef.current.width - 20, (r.x - x0) * pxPerByte));
    setTip({ block, x: left, y: r.y + r.h - 8 + AXIS_HEIGHT, pinned: true });
  }, [scale, setTip]);

  // The renderer lives as long as its canvas; a lost device that cannot be recreated gets a new canvas.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    let renderer: SegmentMapRenderer | null = null;
    let cancelled = false;
    void SegmentMapRenderer.create(canvas, {
      canvas2d: cannotPresent,
      failed: (message, canvas2d) => {
        setFailure(message);
        if (canvas2d) cannotPresent = true;
        setCanvasKey((k) => k + 1);
      },
    }).then((r) => {
      if (cancelled) {
        r.destroy();
        return;
      }
      renderer = r;
      rendererRef.current = r;
      setBackend(r.backend);
      relayout();
    });
    return () => {
      cancelled = true;
      renderer?.destroy();
      if (rendererRef.current === renderer) rendererRef.current = null;
    };
  }, [canvasKey, relayout]);

  // window.splitscope.ready() waits for the map's pending frame.
  useEffect(() => registerDrawWait(() => rendererRef.current?.settled() ?? Promise.resolve()), []);

  // Export... takes the picture at the current zoom.
  useEffect(
    () =>
      registerExportableMap({
        overlay: () => svgRef.current,
        top: AXIS_HEIGHT,
        rects: (each) => rendererRef.current?.rects(each),
      }),
    [],
  );

  // Zoom, pan and the keyboard on the canvas.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const sel = select(canvas);
    const z = zoom<HTMLCanvasElement, unknown>()
      .on('zoom', (event: { transform: ZoomTransform }) => {
        transformRef.current = event.transform;
        paint();
      })
      .on('end', (event: { transform: ZoomTransform; sourceEvent: unknown }) => {
        // Only the user's zooms (a programmatic one has no source event) go to the link.
        if (!event.sourceEvent && !keyZoom) return;
        keyZoom = false;
        const t = event.transform;
        const width = sizeRef.current.width;
        linkRef.current.onZoom?.(t.k === 1 && t.x === 0 ? null : { k: t.k, x: width > 0 ? t.x / width : 0 });
      });
    /** Set while a key zooms or pans (d3 sees no source event then). */
    let keyZoom = false;
    zoomRef.current = z;
    sel.call(z).on('dblclick.zoom', null);
    relayout();
    // [ and ] pin the previous / next block (in address order within lanes), panning to it when hidden.
    const stepBlock = (delta: number): void => {
      const g = geometryRef.current;
      const l = layoutRef.current;
      const n = l?.blockAddr.length ?? 0;
      if (!g || !l || n === 0) return;
      const current = tipRef.current?.block ?? -1;
      const block = current < 0 ? (delta > 0 ? 0 : n - 1) : Math.min(n - 1, Math.max(0, current + delta));
      const r = blockRect(g, l, block);
      const { width } = sizeRef.current;
      let { pxPerByte, x0 } = scale();
      if ((r.x - x0) * pxPerByte < 0 || (r.x + r.w - x0) * pxPerByte > width) {
        // Centre the block, or put its start at a quarter when it is wider than the view (x in unzoomed px).
        const target = r.w * pxPerByte < width ? r.x + r.w / 2 : r.x + width / 4 / pxPerByte;
        z.translateTo(sel, (target * width) / g.rowBytes, 0, [width / 2, 0]);
        ({ pxPerByte, x0 } = scale());
      }
      const left = Math.max(0, Math.min(width - 20, (r.x - x0) * pxPerByte));
      setTip({ block, x: left, y: r.y + r.h - 8 + AXIS_HEIGHT, pinned: true });
      paint();
    };
    const onKey = (e: KeyboardEvent): void => {
      keyZoom = true;
      const { width, height } = sizeRef.current;
      const centre: [number, number] = [width / 2, height / 2];
      const k = transformRef.current.k;
      if (e.key === '+' || e.key === '=' || e.key === 'ArrowUp') z.scaleBy(sel, 1.5, centre);
      else if (e.key === '-' || e.key === '_' || e.key === 'ArrowDown') z.scaleBy(sel, 1 / 1.5, centre);
      else if (e.key === 'ArrowLeft') z.translateBy(sel, width / 8 / k, 0);
      else if (e.key === 'ArrowRight') z.translateBy(sel, -width / 8 / k, 0);
      else if (e.key === '0' || e.key === 'Home') z.transform(sel, zoomIdentity);
      else if (e.key === 'Escape') setTip(null);
      else if (e.key === '[' || e.key === ']') stepBlock(e.key === ']' ? 1 : -1);
      else {
        keyZoom = false;
        return;
      }
      e.preventDefault();
    };
    canvas.addEventListener('keydown', onKey);
    return () => {
      canvas.removeEventListener('keydown', onKey);
      sel.on('.zoom', null);
    };
  }, [canvasKey, paint, relayout, scale, setTip]);

  // Canvas size follows its box (and devicePixelRatio, read at each paint).
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const observer = new ResizeObserver(() => {
      const width = canvas.clientWidth;
      const height = canvas.clientHeight;
      if (width === sizeRef.current.width && height === sizeRef.current.height) return;
      sizeRef.current = { width, height };
      relayout();
    });
    observer.observe(canvas);
    const dpr = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    dpr.addEventListener('change', paint);
    return () => {
      observer.disconnect();
      dpr.removeEventListener('change', paint);
    };
  }, [canvasKey, paint, relayout]);

  useEffect(() => {
    // Block indices belong to one layout: a pinned allocation is followed by its id, else the tip goes.
    const t = tipRef.current;
    const id = t?.pinned && layoutRef.current ? (layoutRef.current.blockId[t.block] ?? -1) : -1;
    const block = id >= 0 && layout ? layout.blockId.indexOf(id) : -1;
    layoutRef.current = layout;
    // The marks of this layout come with it (computed beside it): the scene is built with them once.
    markedRef.current = marked;
    setTip(t && block >= 0 ? { ...t, block } : null);
    relayout();
  }, [layout, relayout, setTip]); // eslint-disable-line react-hooks/exhaustive-deps

  // New marks for the layout drawn: the same scene, its blocks' flags alone written again.
  useEffect(() => {
    if (markedRef.current === marked) return;
    markedRef.current = marked;
    const l = layoutRef.current;
    if (l && geometryRef.current && (marked === null || marked.layout === l)) rendererRef.current?.setMarks(marksFor(l, marked, canvasRef.current));
  }, [marked]);

  // A click outside the map unpins.
  useEffect(() => {
    const onDown = (e: PointerEvent): void => {
      if (tipRef.current?.pinned && !plotRef.current?.contains(e.target as Node)) setTip(null);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [setTip]);

  const blockAt = (e: React.PointerEvent | React.MouseEvent): number => {
    const g = geometryRef.current;
    const l = layoutRef.current;
    if (!g || !l) return -1;
    const { pxPerByte, x0 } = scale();
    return pickBlock(g, l, x0 + e.nativeEvent.offsetX / pxPerByte, e.nativeEvent.offsetY);
  };

  const onPointerMove = (e: React.PointerEvent<HTMLCanvasElement>): void => {
    if (tipRef.current?.pinned || e.buttons) return;
    const block = blockAt(e);
    const prev = tipRef.current;
    if (block < 0) {
      if (prev) setTip(null);
    } else setTip({ block, x: e.nativeEvent.offsetX, y: e.nativeEvent.offsetY + AXIS_HEIGHT, pinned: false });
    if (prev?.block !== block) paint();
  };

  const onClick = (e: React.MouseEvent<HTMLCanvasElement>): void => {
    const block = blockAt(e);
    setTip(block < 0 || (tipRef.current?.pinned && tipRef.current.block === block) ? null : { block, x: e.nativeEvent.offsetX, y: e.nativeEvent.offsetY + AXIS_HEIGHT, pinned: true });
    paint();
  };

  const onPointerLeave = (): void => {
    if (tipRef.current && !tipRef.current.pinned) {
      setTip(null);
      paint();
    }
  };

  return (
    <section className="segment-map" aria-label="Segment map">
      <div className="segment-map-head">
        <Legend />
        <span className="segment-map-backend" data-backend={backend ?? ''}>
          {backend === 'webgpu' ? 'WebGPU' : backend === 'canvas2d' ? (cannotPresent ? 'Canvas 2D (WebGPU cannot show a canvas here)' : 'Canvas 2D (no WebGPU adapter)') : ''}
        </span>
      </div>
      <div className="segment-map-plot" ref={plotRef}>
        <canvas
          key={canvasKey}
          ref={canvasRef}
          className="segment-map-canvas"
          style={{ top: AXIS_HEIGHT }}
          tabIndex={0}
          role="img"
          aria-label="Segment map: memory segments by pool and stream, blocks coloured by state"
          aria-describedby={hintId}
          data-backend={backend ?? ''}
          onPointerMove={onPointerMove}
          onPointerLeave={onPointerLeave}
          onClick={onClick}
        />
        <svg ref={svgRef} className="segment-map-overlay" aria-hidden="true">
          <g className="segment-map-axis" transform={`translate(0,${AXIS_HEIGHT - 1})`} />
          <g className="segment-map-lanes" />
          <rect className="segment-map-highlight" display="none" />
        </svg>
        {!layout && <p className="segment-map-empty">No memory to show yet.</p>}
        {tip && layout && tip.block < layout.blockAddr.length && (
          <BlockTip layout={layout} tip={tip} cursor={cursor} frames={frames} width={sizeRef.current.width} />
        )}
      </div>
      <p className="segment-map-hint" id={hintId}>
        Scroll or <kbd>+</kbd>/<kbd>−</kbd> to zoom, drag or <kbd>←</kbd>/<kbd>→</kbd> to pan, <kbd>0</kbd> to reset; hover a block for its details, click
        (or <kbd>[</kbd>/<kbd>]</kbd> from block to block) to pin them, <kbd>Esc</kbd> unpins.
        {failure && <span className="segment-map-failure"> Redrawn after a GPU problem: {failure}.</span>}
      </p>
    </section>
  );
}

function Legend(): JSX.Element {
  return (
    <ul className="segment-map-legend">
      {BLOCK_STATE_NAMES.map((name, i) => (
        <li key={name}>
          <span className="swatch" style={{ background: PALETTE[i]!.css }} />
          {name}
        </li>
      ))}
      <li>
        <span className="swatch oversize" style={{ backgroundColor: PALETTE[0]!.css }} />
        oversize (≥ max_split)
      </li>
    </ul>
  );
}

interface BlockTipProps {
  layout: MemoryLayout;
  tip: Tip;
  cursor: number;
  frames: SegmentMapProps['frames'];
  width: number;
}

function BlockTip({ layout: l, tip, cursor, frames, width }: BlockTipProps): JSX.Element {
  const b = tip.block;
  const s = segmentOfBlock(l, b);
  const id = l.blockId[b]!;
  const since = l.blockSince[b]!;
  const [stack, setStack] = useState<string[] | null | 'loading'>(null);
  useEffect(() => {
    if (!frames || id < 0) {
      setStack(null);
      return;
    }
    let live = true;
    setStack('loading');
    frames(id).then(
      (f) => live && setStack(f),
      () => live && setStack(null),
    );
    return () => {
      live = false;
    };
  }, [frames, id]);
  const state = l.blockState[b]!;
  const style = { left: Math.max(0, Math.min(tip.x + 14, width - 340)), top: tip.y + 16 };
  return (
    <div className={`segment-map-tip${tip.pinned ? ' pinned' : ''}`} style={style} role="tooltip" data-block={b}>
      <div className="tip-title">
        <span className="swatch" style={{ background: PALETTE[state]!.css }} />
        {BLOCK_STATE_NAMES[state]}
        {l.blockOversize[b] ? ' · oversize' : ''}
        {tip.pinned ? ' · pinned' : ''}
      </div>
      <dl>
        <dt>size</dt>
        <dd data-field="size">{formatSize(l.blockSize[b]!)}</dd>
        {l.blockRequested[b]! > 0 && (
          <>
            <dt>requested</dt>
            <dd>{formatSize(l.blockRequested[b]!)}</dd>
          </>
        )}
        <dt>address</dt>
        <dd>{hex(l.blockAddr[b]!)}</dd>
        {since >= 0 && (
          <>
            <dt>age</dt>
            <dd>
              {(cursor - since).toLocaleString()} requests (allocated at {since.toLocaleString()})
            </dd>
          </>
        )}
        <dt>segment</dt>
        <dd>
          {hex(l.segmentAddr[s]!)}, {formatSize(l.segmentSize[s]!)}, {l.poolNames[l.segmentPool[s]!] ? `${l.poolNames[l.segmentPool[s]!]}, ` : ''}{l.segmentSmall[s] ? 'small' : 'large'} pool, stream {l.segmentStream[s]}
        </dd>
      </dl>
      {stack === 'loading' && <div className="tip-frames">loading stack…</div>}
      {Array.isArray(stack) && stack.length > 0 && (
        <ol className="tip-frames">
          {stack.slice(0, 16).map((f, i) => (
            <li key={i}>{f}</li>
          ))}
          {stack.length > 16 && <li>… {stack.length - 16} more frames</li>}
        </ol>
      )}
    </div>
  );
}
