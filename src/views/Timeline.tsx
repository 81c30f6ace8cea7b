// The timeline: allocated, reserved and active bytes over requests (d3 scales and axes, one SVG path per
// series from a per-pixel min/max envelope), OOMs and retries marked, and a scrubber that sets the cursor.
// Drawing happens in the page's one animation-frame callback (lib/frame-scheduler.ts), outside React
// renders; React renders only the frame of the chart, the controls and the readout.
import { axisBottom, axisLeft, format, scaleLinear, select } from 'd3';
import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import { formatSize } from '../allocator/format-size';
import { cancelDraw, scheduleDraw } from '../lib/frame-scheduler';
import { measure } from '../lib/timing';
import { envelope, markerColumns } from '../lib/envelope';
import { areaPath, seriesPaths } from '../plot/timeline-paths';
import { keysTakenBy, keyTarget } from './timeline-keys';
import { paintPaths } from './paint-paths';
import { setChanged } from './set-changed';
import { byteAxis } from './timeline-ticks';
import { upperBound } from '../lib/binary-search';
import type { TimelineAnnotation } from '../trace/measures/timeline-annotations';
import type { StackedCategories } from '../trace/categories/categories';
import './timeline.css';

export interface TimelineSeries {
  allocated: Float64Array; // bytes after each request (index = request index, 0-based)
  reserved: Float64Array;
  active: Float64Array;
  ooms: Int32Array; // request indices that hit OOM
  retries: Int32Array; // request indices where the allocator freed cached blocks and retried
}

export interface TimelineProps {
  series: TimelineSeries | null;
  cursor: number; // 0-based index of the last request applied
  onCursor(index: number): void; // user moved the cursor (scrubber, buttons, keys)
  playing: boolean;
  onPlayingChange(playing: boolean): void;
  /** Requests after which the run calls empty_cache() or reset_peak_memory_stats() (inserted by the user). */
  calls?: readonly number[];
  /** Bytes of a selection over the requests (a stack view's frame), drawn over the rest. */
  overlay?: TimelineOverlay | null;
  /** Requests a search matched, ticked along the x axis. */
  marks?: Int32Array | null;
  /** Whether the trace has times: then the x axis can run over time ... */
  timed?: boolean;
  /** ... with each request's time_us (non-decreasing), asked for through onWantTime when first needed. */
  time?: Float64Array | null;
  onWantTime?(): void;
  /** The program's phases (record_function ranges, user_metadata), drawn as bands along the top. */
  annotations?: readonly TimelineAnnotation[];
  /** A memory cap the replay ran under: a line across the chart where reserved memory may go no higher. */
  cap?: number | null;
  /** Requested bytes stacked by what the memory is (trace/categories), drawn as areas under allocated. */
  layers?: TimelineLayers | null;
}

export interface TimelineLayers {
  /** The tops of the stacked areas, at most a few thousand points a row over the series' requests. */
  rows: StackedCategories;
  names: readonly string[];
  /** Each layer's bytes at the cursor (the legend's figures), null while unknown. */
  atCursor: Float64Array | null;
}

/** Layer c's row of `layers`. */
const layerRow = (l: TimelineLayers, c: number): Float32Array => l.rows.stacked.subarray(c * l.rows.points, (c + 1) * l.rows.points);
/** At most this many layers (one path each in the SVG). */
const LAYERS = 7;

export interface TimelineOverlay {
  series: Float64Array;
  /** What it is, in a few words (the legend's entry). */
  label: string;
}

const MARGIN = { top: 12, right: 14, bottom: 22, left: 72 };
const count = format(',');

const value = (a: Float64Array | undefined, i: number): string => (a && i >= 0 ? formatSize(a[i]!) : '–');
const totalOf = (s: TimelineSeries | null): number => s?.allocated.length ?? 0;

function contains(sorted: Int32Array, value: number): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo] === value;
}

function seriesMax(s: TimelineSeries): number {
  let m = 0;
  for (const a of [s.reserved, s.allocated, s.active]) for (let i = 0; i < a.length; i++) if (a[i]! > m) m = a[i]!;
  return m;
}

const NO_CALLS: readonly number[] = [];
const NO_ANNOTATIONS: readonly TimelineAnnotation[] = [];
/** Height of one strip of annotation bands at the plot's top, px. */
const STRIP = 9;

export function Timeline({ series, cursor, onCursor, playing, onPlayingChange, calls = NO_CALLS, overlay = null, marks = null, timed: hasTime = false, time = null, onWantTime, annotations = NO_ANNOTATIONS, cap = null, layers = null }: TimelineProps) {
  const [overTime, setOverTime] = useState(false);
  const timed = overTime && time !== null && series !== null && time.length === series.allocated.length;
  const plotRef = useRef<HTMLDivElement>(null);
  const svgRef = useRef<SVGSVGElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const total = totalOf(series);
  const at = total ? Math.min(total - 1, Math.max(0, cursor)) : -1;

  // Everything the frame callback reads, kept current without re-creating the callback.
  const live = useRef({ series, calls, overlay, layers, marks, timed, time, annotations, cap, cursor: at, onCursor, width: 0, height: 0, drawnKey: '', axesKey: '', annotationsKey: '', paintedSize: '', max: 0, seriesMaxOf: null as TimelineSeries | null, layersKey: '', layerPaths: [] as string[], layerCanvas: null as HTMLCanvasElement | null });
  live.current.layers = layers;
  live.current.timed = timed;
  live.current.cap = cap;
  live.current.time = time;
  live.current.annotations = annotations;
  live.current.series = series;
  live.current.calls = calls;
  live.current.overlay = overlay;
  live.current.marks = marks;
  live.current.cursor = at;
  live.current.onCursor = onCursor;

  const geometry = () => {
    const { width, height, series: s } = live.current;
    const n = totalOf(s);
    const iw = Math.max(1, width - MARGIN.left - MARGIN.right);
    const ih = Math.max(1, height - MARGIN.top - MARGIN.bottom);
    const t = live.current.time;
    if (live.current.timed && t && n > 0) {
      // Over time: seconds (or ms for short runs) since the first request; index i sits at its time.
      const span = (t[n - 1]! - t[0]!) / 1e6;
      const unit = span >= 10 ? 1e6 : 1e3;
      const x = scaleLinear().domain([0, Math.max((t[n - 1]! - t[0]!) / unit, 1e-9)]).range([0, iw]);
      const at = (v: number): number => Math.max(0, Math.min(n - 1, upperBound(t, t[0]! + v * unit) - 1));
      return { n, iw, ih, x, xi: (i: number) => x((t[Math.max(0, Math.min(n - 1, Math.round(i)))]! - t[0]!) / unit), indexAt: (px: number) => at(x.invert(px)), unit: unit === 1e6 ? 's' : 'ms' };
    }
    // Requests are numbered from 0 on screen, as everywhere (the CLI, links): index i sits at request i.
    const x = scaleLinear().domain([0, Math.max(1, n - 1)]).range([0, iw]);
    return { n, iw, ih, x, xi: (i: number) => x(i), indexAt: (px: number) => Math.round(x.invert(px)), unit: '' };
  };

  const draw = () => {
    const L = live.current;
    const svg = svgRef.current;
    if (!svg || L.width === 0) return;
    const t0 = performance.now();
    const root = select(svg);
    const { iw, ih, x, xi, unit } = geometry();
    const s = L.series;
    if (s !== L.seriesMaxOf) {
      L.max = s ? seriesMax(s) : 0;
      L.seriesMaxOf = s;
    }
    // A cap near the series is drawn within the chart; one far above it would flatten them, and is said in the legend.
    const capShown = L.cap !== null && s !== null && L.cap <= 2 * L.max ? L.cap : null;
    const axis = byteAxis(Math.max(L.max, capShown ?? 0), Math.max(2, Math.floor(ih / 30)));
    const y = scaleLinear().domain([0, axis.top]).range([ih, 0]);
    const key = `${L.width}x${L.height}:${seriesId(s)}:${L.calls.join(',')}:${seriesId(L.overlay)}:${seriesId(L.layers?.rows ?? null)}:${seriesId(L.marks)}:${L.timed}:${seriesId(L.annotations)}:${capShown}`;

    const drawAxes = (): void => {
      root.attr('width', L.width).attr('height', L.height);
      root.select('.tl-plot-area').attr('transform', `translate(${MARGIN.left},${MARGIN.top})`);
      root.select<SVGGElement>('.tl-grid')
        .call(axisLeft(y).tickValues(axis.ticks).tickSize(-iw).tickFormat(() => ''))
        .call((g) => g.select('.domain').remove());
      root.select<SVGGElement>('.tl-y')
        .call(axisLeft(y).tickValues(axis.ticks).tickFormat((v) => axis.format(+v)))
        .call((g) => g.select('.domain').remove());
      root.select<SVGGElement>('.tl-x')
        .attr('transform', `translate(0,${ih})`)
        .call(
          axisBottom(x)
            .ticks(Math.max(2, Math.floor(iw / 110)))
            .tickFormat((v) => (unit ? `${format(',~g')(+v)} ${unit}` : Number.isInteger(+v) ? count(+v) : '')),
        );
    };

    // Axes and series only when the data or the size changed; a cursor move redraws the cursor alone.
    if (L.drawnKey !== key) {
      L.drawnKey = key;
      // The axes only when they change: a slider step replays the series, and their ticks seldom move.
      const axesKey = `${L.width}x${L.height}:${axis.top}:${axis.ticks.join(',')}:${x.domain().join(',')}:${unit}`;
      if (L.axesKey !== axesKey) {
        L.axesKey = axesKey;
        drawAxes();
      }

      // The program's phases: record_function ranges on the first strip, user_metadata on the second
      // (the trace's own: the same under every config, so rewritten only with the axes or the source).
      const annotationsKey = `${axesKey}:${seriesId(L.annotations)}:${s !== null}`;
      if (L.annotationsKey !== annotationsKey) {
        L.annotationsKey = annotationsKey;
        root
          .select('.tl-annotations')
          .selectAll<SVGRectElement, TimelineAnnotation>('rect')
          .data(s ? L.annotations : [])
          .join((enter) => enter.append('rect').call((r) => r.append('title')))
          .attr('class', (a) => `tl-annotation tl-annotation-${a.kind}`)
          .attr('x', (a) => xi(a.start))
          .attr('width', (a) => Math.max(2, xi(a.end) - xi(a.start)))
          .attr('y', (a) => (a.kind === 'range' ? 0 : STRIP + 1))
          .attr('height', STRIP)
          .select('title')
          .text((a) => `${a.label}: requests ${count(a.start)}–${count(a.end)}`);
      }
      const columns = Math.ceil(iw);
      const env = s && { reserved: envelope(s.reserved, columns), active: envelope(s.active, columns), allocated: envelope(s.allocated, columns) };
      const paths = env ? seriesPaths(env, xi, y) : { reservedArea: '', reserved: '', active: '', allocated: '' };
      const over = s && L.overlay && L.overlay.series.length === s.allocated.length ? L.overlay.series : null;
      const n = s?.allocated.length ?? 0;
      const layered = s && L.layers && L.layers.rows.requests === n ? L.layers : null;
      // The layers' paths change only with the layers, the size and the scales: not with each replay's series.
      const layersKey = `${seriesId(layered?.rows ?? null)}:${columns}:${ih}:${axis.top}:${L.timed}:${n}`;
      if (L.layersKey !== layersKey) {
        L.layersKey = layersKey;
        // Point k of a row stands at request k·n/points.
        const xk = layered ? (k: number) => xi((k * n) / layered.rows.points) : xi;
        L.layerPaths = Array.from({ length: LAYERS }, (_, c) => (layered && c < layered.names.length ? areaPath(envelope(layerRow(layered, c), columns), xk, y) : ''));
      }
      const layerPaths = L.layerPaths.map((d, c) => [`.tl-layer-${c}`, d] as const);
      const part = (name: string): Element | null => svg.querySelector(name);
      // Many slider positions replay alike: the same paths leave the canvas as it is.
      let seriesChanged = false;
      for (const [name, d] of [
        ['.tl-reserved-area', paths.reservedArea],
        ['.tl-reserved', paths.reserved],
        ['.tl-active', paths.active],
        ['.tl-allocated', paths.allocated],
        ['.tl-overlay', over ? areaPath(envelope(over, columns), xi, y) : ''],
      ] as const) {
        if (setChanged(part(name), 'd', d)) seriesChanged = true;
      }
      let layersChanged = false;
      for (const [name, d] of layerPaths) if (setChanged(part(name), 'd', d)) layersChanged = true;
      // The series' pixels come from the canvas under the SVG (see paint-paths.ts); the paths stay for exports.
      // The layers, the same under every config, are painted on a canvas of their own when they change.
      const size = `${L.width}x${L.height}`;
      if (seriesChanged || layersChanged || L.paintedSize !== size) {
        const origin = { x: MARGIN.left, y: MARGIN.top };
        const layerEls = [...svg.querySelectorAll<SVGPathElement>('path.tl-layer')];
        if (layersChanged || L.paintedSize !== size) paintPaths((L.layerCanvas ??= document.createElement('canvas')), L.width, L.height, origin, layerEls);
        L.paintedSize = size;
        const [area, ...lines] = [...svg.querySelectorAll<SVGPathElement>('path[data-canvas]:not(.tl-layer)')];
        paintPaths(canvasRef.current!, L.width, L.height, origin, [area!, L.layerCanvas!, ...lines]);
      }
      // Markers: at most one per pixel column, all in one path each.
      const markers = (name: string, columns: number[], path: (c: number) => string): void => {
        setChanged(part(name), 'data-count', columns.length);
        setChanged(part(name), 'd', columns.map(path).join(''));
      };
      markers('.tl-marks', s && L.marks ? markerColumns(L.marks, xi) : [], (c) => `M${c},${ih - 6}V${ih}`);
      const ooms = s ? markerColumns(s.ooms, xi) : [];
      // OOM: a faint rule across the plot and a ▲ on the x axis; retry: a ▼ along the top.
      markers('.tl-ooms', ooms, (c) => `M${c - 4.5},${ih - 0.5}l4.5,-8l4.5,8z`);
      setChanged(part('.tl-oom-rules'), 'd', ooms.map((c) => `M${c},0V${ih}`).join(''));
      markers('.tl-retries', s ? markerColumns(s.retries, xi) : [], (c) => `M${c - 4},0.5h8l-4,7z`);
      // Inserted calls: a dashed rule after their request.
      markers('.tl-calls', s ? markerColumns(Int32Array.from(L.calls), xi) : [], (c) => `M${c},0V${ih}`);
      for (const el of svg.querySelectorAll('.tl-grid, .tl-x, .tl-y')) setChanged(el, 'visibility', s ? null : 'hidden');
      // The cap: a dashed line at its height, labelled.
      const capY = capShown !== null ? y(capShown) : -100;
      const capLine = part('.tl-cap');
      for (const [name, v] of [['x1', 0], ['x2', iw], ['y1', capY], ['y2', capY]] as const) setChanged(capLine, name, v);
      setChanged(capLine, 'visibility', capShown === null ? 'hidden' : null);
      const capLabel = part('.tl-cap-label');
      setChanged(capLabel, 'x', iw - 4);
      setChanged(capLabel, 'y', capY - 3);
      setChanged(capLabel, 'visibility', capShown === null ? 'hidden' : null);
      if (capLabel && capShown !== null && capLabel.textContent !== `cap ${formatSize(capShown)}`) capLabel.textContent = `cap ${formatSize(capShown)}`;
    }

    // The cursor: a line and dots on allocated and reserved.
    const cx = s && L.cursor >= 0 ? xi(L.cursor) : -100;
    for (const el of svg.querySelectorAll('.tl-cursor, .tl-dot-reserved, .tl-dot-allocated')) setChanged(el, 'visibility', cx < 0 ? 'hidden' : null);
    const line = svg.querySelector('.tl-cursor');
    for (const [name, v] of [['x1', cx], ['x2', cx], ['y1', 0], ['y2', ih]] as const) setChanged(line, name, v);
    for (const [dot, values] of [['.tl-dot-reserved', s?.reserved], ['.tl-dot-allocated', s?.allocated]] as const) {
      const el = svg.querySelector(dot);
      setChanged(el, 'cx', cx);
      setChanged(el, 'cy', values && L.cursor >= 0 ? y(values[L.cursor]!) : -100);
    }
    measure('splitscope:timeline-draw', t0);
  };

  // One function for the frame scheduler to run (it reads only refs, so the first render's will do).
  const drawInFrame = useRef(draw).current;
  const schedule = () => scheduleDraw(drawInFrame);

  // Size from the container, redrawn on the next frame.
  useEffect(() => {
    const el = plotRef.current!;
    const ro = new ResizeObserver(([entry]) => {
      const { width, height } = entry!.contentRect;
      live.current.width = Math.floor(width);
      live.current.height = Math.floor(height);
      schedule();
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      cancelDraw(drawInFrame);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(schedule, [series, at, overlay, layers, marks, timed, annotations, cap]); // eslint-disable-line react-hooks/exhaustive-deps

  // A theme change recolours the SVG by itself; the canvas is painted again.
  useEffect(() => {
    const repaint = () => {
      live.current.drawnKey = '';
      live.current.paintedSize = '';
      schedule();
    };
    const scheme = window.matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', repaint);
    const themes = new MutationObserver(repaint);
    themes.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => {
      scheme.removeEventListener('change', repaint);
      themes.disconnect();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const move = (index: number) => {
    if (!total) return;
    const next = Math.min(total - 1, Math.max(0, index));
    if (next !== live.current.cursor) onCursor(next);
  };

  // Arrow keys anywhere on the page, unless a field, select or slider has the focus (it owns them).
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || keysTakenBy(document.activeElement)) return;
      const L = live.current;
      const n = totalOf(L.series);
      const target = keyTarget(e.key, e.shiftKey, L.cursor, n);
      if (target === null || e.key.startsWith('Page')) return; // PageUp/Down scroll the page
      e.preventDefault();
      if (target !== L.cursor) L.onCursor(target);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const onSliderKey = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const target = keyTarget(e.key, e.shiftKey, at, total);
    if (target === null) return;
    e.preventDefault();
    move(target);
  };

  const fromPointer = (e: PointerEvent) => {
    const rect = svgRef.current!.getBoundingClientRect();
    move(geometry().indexAt(e.clientX - rect.left - MARGIN.left));
  };

  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    if (e.button !== 0 || !total) return;
    e.currentTarget.setPointerCapture(e.pointerId); // the drag keeps going outside the chart
    fromPointer(e);
  };

  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    if (e.currentTarget.hasPointerCapture(e.pointerId)) fromPointer(e);
  };

  const isOom = !!series && at >= 0 && contains(series.ooms, at);
  const isRetry = !!series && at >= 0 && contains(series.retries, at);
  const valueText = series && at >= 0
    ? `request ${count(at)} of 0 to ${count(total - 1)}: allocated ${formatSize(series.allocated[at]!)}, reserved ${formatSize(series.reserved[at]!)}${isOom ? ', OOM' : ''}`
    : 'no requests';

  return (
    <section className="timeline" role="group" aria-label="Timeline">
      <ul className="tl-legend" aria-label="Legend and values at the cursor">
        <li>
          <span className="tl-swatch tl-sw-allocated" />allocated <b className="tl-value">{value(series?.allocated, at)}</b>
        </li>
        <li>
          <span className="tl-swatch tl-sw-reserved" />reserved <b className="tl-value">{value(series?.reserved, at)}</b>
        </li>
        <li>
          <span className="tl-swatch tl-sw-active" />active <b className="tl-value">{value(series?.active, at)}</b>
        </li>
        <li title="Requests that ran out of memory">
          <span className="tl-mark tl-mk-oom">▲</span>OOM{series ? ` ×${count(series.ooms.length)}` : ''}
        </li>
        <li title="Requests where the allocator freed its cached blocks and retried">
          <span className="tl-mark tl-mk-retry">▼</span>retry{series ? ` ×${count(series.retries.length)}` : ''}
        </li>
        {overlay && (
          <li title={overlay.label}>
            <span className="tl-swatch tl-sw-overlay" />
            <span className="tl-overlay-label">{overlay.label}</span> <b className="tl-value">{value(overlay.series, at)}</b>
          </li>
        )}
        {layers?.atCursor &&
          series &&
          layers.names.map((name, c) => {
            const bytes = layers.atCursor![c]!;
            return bytes > 0 ? (
              <li key={name} className="tl-layer-key" data-layer={c} title={`${name}: bytes requested, at the cursor (allocated counts whole blocks, each rounded up)`}>
                <span className={`tl-swatch tl-sw-layer-${c}`} />
                {name} <b className="tl-value">{formatSize(bytes)}</b>
              </li>
            ) : null;
          })}
        {marks && (
          <li title="Requests the search matched">
            <span className="tl-mark tl-mk-match">|</span>matches ×{count(marks.length)}
          </li>
        )}
        {annotations.length > 0 && (
          <li title="record_function ranges the profiler recorded (top strip) and user_metadata stretches (second strip); hover one for its name">
            <span className="tl-swatch tl-sw-annotation" />
            phases ×{count(annotations.length)}
          </li>
        )}
        {calls.length > 0 && (
          <li title="torch.cuda.empty_cache() or reset_peak_memory_stats() inserted into the run">
            <span className="tl-mark tl-mk-call">┆</span>call ×{count(calls.length)}
          </li>
        )}
        {cap !== null && (
          <li title="The memory cap the replay ran under: reserved memory may go no higher">
            <span className="tl-mark tl-mk-cap">┄</span>cap {formatSize(cap)}
          </li>
        )}
        {isOom && <li className="tl-badge tl-badge-oom">OOM at the cursor</li>}
        {!isOom && isRetry && <li className="tl-badge tl-badge-retry">retry at the cursor</li>}
      </ul>
      <div
        ref={plotRef}
        className="tl-plot"
        role="slider"
        tabIndex={0}
        aria-label="Cursor (request)"
        aria-valuemin={0}
        aria-valuemax={Math.max(0, total - 1)}
        aria-valuenow={Math.max(0, at)}
        aria-valuetext={valueText}
        aria-disabled={total ? undefined : true}
        onKeyDown={onSliderKey}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
      >
        <canvas ref={canvasRef} className="tl-series" aria-hidden="true" />
        <svg ref={svgRef} aria-hidden="true">
          <g className="tl-plot-area">
            <g className="tl-grid" />
            {/* Painted on the canvas under this SVG (.tl-series); hidden here, shown in exports (svg-export.ts). */}
            <path className="tl-reserved-area" data-canvas="" />
            {/* The stacked layers, the top one first: each lower one is painted over it. */}
            {Array.from({ length: LAYERS }, (_, k) => LAYERS - 1 - k).map((c) => (
              <path key={c} className={`tl-layer tl-layer-${c}`} data-canvas="" />
            ))}
            <path className="tl-reserved" data-canvas="" />
            <path className="tl-active" data-canvas="" />
            <path className="tl-allocated" data-canvas="" />
            <path className="tl-overlay" data-canvas="" />
            <path className="tl-marks" />
            <g className="tl-annotations" />
            <path className="tl-oom-rules" />
            <path className="tl-calls" />
            <path className="tl-retries" />
            <path className="tl-ooms" />
            <line className="tl-cap" visibility="hidden" />
            <text className="tl-cap-label" textAnchor="end" visibility="hidden" />
            <line className="tl-cursor" />
            <circle className="tl-dot-reserved" r={4} cx={-100} />
            <circle className="tl-dot-allocated" r={4} cx={-100} />
            <g className="tl-x" />
          </g>
          <g className="tl-y" transform={`translate(${MARGIN.left},${MARGIN.top})`} />
        </svg>
        {!series && <p className="tl-empty">No requests yet</p>}
      </div>
      <div className="tl-controls">
        <button type="button" aria-label="Step back" title="Step back one request (←)" disabled={!total || at <= 0} onClick={() => move(at - 1)}>
          ◀
        </button>
        <button type="button" aria-label="Step forward" title="Step forward one request (→)" disabled={!total || at >= total - 1} onClick={() => move(at + 1)}>
          ▶
        </button>
        <button type="button" className="tl-play" aria-label={playing ? 'Pause' : 'Play'} disabled={!total} onClick={() => onPlayingChange(!playing)}>
          {playing ? '❚❚ Pause' : '▶ Play'}
        </button>
        <span className="tl-position">
          request {count(Math.max(0, at))} / {count(total)}
          {time && at >= 0 && at < time.length && ` · ${format(',.3f')((time[at]! - time[0]!) / 1e3)} ms`}
        </span>
        {hasTime && (
          <label className="tl-axis-choice">
            <input
              type="checkbox"
              checked={overTime}
              onChange={(e) => {
                setOverTime(e.target.checked);
                if (e.target.checked && !time) onWantTime?.();
              }}
            />{' '}
            over time (time_us)
          </label>
        )}
      </div>
    </section>
  );
}

// A stable id per series object, so that a new series redraws even at the same size.
const ids = new WeakMap<object, number>();
let nextId = 1;
function seriesId(s: object | null): number {
  if (!s) return 0;
  let id = ids.get(s);
  if (id === undefined) ids.set(s, (id = nextId++));
  return id;
}
