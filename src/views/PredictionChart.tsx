// A predicted run's peaks against the size, with the room of a chart (the size control's sparkline is
// its thumbnail): sizes on x, bytes on y, peak reserved with the prediction's error band around it and
// peak allocated, the cap, the recorded sizes, the sizes that run out of memory (under most address
// layouts), the largest size that fits and the sizes the band puts within its error of the cap, each
// labelled, so that an exported image stands alone.
import { useQuery } from '@tanstack/react-query';
import { scaleLinear } from 'd3';
import { useRef } from 'react';
import { bandPercent } from '../trace/predict/prediction-band';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { chartSizes, predictionCurveQuery, predictionFitQuery, sizeSteps } from '../state/prediction';
import { useSession, useViewKey } from '../state/session-store';
import { keyId } from '../state/view-key';
import type { CurvePoint, PredictionFacts } from '../worker/replay-protocol';
import { bandPath, curvePath } from './prediction-paths';
import { byteAxis } from './timeline-ticks';
import { usePanel } from './use-panel';
import { useWidth } from './use-width';

const H = 330;
const M = { top: 44, right: 16, bottom: 58, left: 72 };
/** The legend: each key's class and words, laid out at about the width of its words (0.8rem text). */
const LEGEND: [string, string][] = [
  ['key-reserved', '━ peak reserved'],
  ['key-band', "▒ the prediction's error"],
  ['key-churn', '━ peak allocated'],
  ['key-oom', '▮ runs out of memory'],
  ['', '▲ recorded sizes'],
];

export function PredictionChart({ facts, cap }: { facts: PredictionFacts; cap: number | null }) {
  const panel = usePanel('prediction-chart');
  return (
    <details className="prediction-chart-panel" {...panel}>
      <summary>Prediction chart: peaks against the size</summary>
      {panel.open && <Chart facts={facts} cap={cap} />}
    </details>
  );
}

function Chart({ facts, cap }: { facts: PredictionFacts; cap: number | null }) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref);
  const key = useViewKey();
  const setSize = useSession((s) => s.setSize);
  const source = useSession((s) => s.summary?.source ?? '');
  const size = key.size ?? facts.size;
  const sizes = chartSizes(sizeSteps(facts.sizes), facts.sizes, size);
  const rows = useQuery(predictionCurveQuery(key, sizes)).data ?? null;
  const fit = useQuery(predictionFitQuery(key)).data;
  const largest = fit?.[0]?.largest ?? null;
  const range = fit?.[0]?.bandRange ?? null;
  const top = Math.max(cap ?? 0, ...(rows ?? []).map((r) => r.peakReserved * (1 + r.band)), 1);
  const axis = byteAxis(top, 5);
  const iw = Math.max(1, width - M.left - M.right);
  const ih = H - M.top - M.bottom;
  const x = scaleLinear().domain([0, Math.max(...sizes)]).range([0, iw]).nice();
  const y = scaleLinear().domain([0, axis.top]).range([ih, 0]);
  const line = (value: (r: CurvePoint) => number): string => curvePath(rows, x, y, value);
  const conf = key.conf ?? '';
  const title = `Predicted peaks against the size, under ${conf || 'the defaults'}${cap !== null ? `, capped at ${formatSize(cap)}` : ''}`;
  return (
    <div className="prediction-chart-big" ref={ref}>
      <svg width={width} height={H} role="img" aria-label="Prediction chart" data-key={rows ? keyId({ ...key, size: undefined }) : undefined} aria-busy={!rows}>
        <text x={M.left} y={16} className="pc-title">
          {title}
        </text>
        <text x={M.left} y={32} className="rc-tick">
          {source}
        </text>
        <g transform={`translate(${M.left},${M.top})`}>
          {axis.ticks.map((t) => (
            <g key={t} transform={`translate(0,${y(t)})`}>
              <line x2={iw} className="rc-grid" />
              <text x={-6} dy="0.32em" textAnchor="end" className="rc-tick">
                {axis.format(t)}
              </text>
            </g>
          ))}
          {x.ticks(8).map((t) => (
            <text key={t} x={x(t)} y={ih + 16} textAnchor="middle" className="rc-tick">
              {grouped(t)}
            </text>
          ))}
          <text x={iw / 2} y={ih + 32} textAnchor="middle" className="rc-tick">
            size (the batch or sequence length the recordings ran at)
          </text>
          {rows?.map((r) => (!r.fits ? <rect key={`o${r.size}`} className="prediction-oom" x={x(r.size) - 2} y={0} width={4} height={ih} data-size={r.size} /> : null))}
          {rows && rows.length > 1 && (
            <path
              className="prediction-band"
              d={bandPath(rows, x, y)}
            />
          )}
          <path className="sweep-churn" d={line((r) => r.peakAllocated)} />
          <path className="sweep-reserved" d={line((r) => r.peakReserved)} />
          {cap !== null && (
            <g className="pc-cap">
              <line className="prediction-cap" x1={0} x2={iw} y1={y(cap)} y2={y(cap)} />
              <text x={iw} y={y(cap) - 4} textAnchor="end" className="rc-tick">
                cap {formatSize(cap)}
              </text>
            </g>
          )}
          {facts.sizes.map((s) => (
            <g key={`r${s}`} className="pc-recorded" transform={`translate(${x(s)},${ih})`} data-size={s}>
              <path d="M0,-8L-5,0L5,0Z" />
              <text y={-11} textAnchor="middle" className="rc-tick">
                recorded
              </text>
            </g>
          ))}
          {range && (
            // The sizes the band puts within the prediction's error of the cap: any may be the largest that fits.
            <g className="pc-band-range" data-lo={range[0]} data-hi={range[1]}>
              <rect x={x(Math.max(x.domain()[0]!, range[0]))} width={Math.max(1, x(Math.min(x.domain()[1]!, range[1])) - x(Math.max(x.domain()[0]!, range[0])))} y={0} height={ih} />
              <text x={x(Math.max(x.domain()[0]!, range[0])) + 4} y={ih - 24} className="rc-tick">
                any of {grouped(Math.max(1, range[0]))} to {grouped(range[1])} may be the largest (the prediction&apos;s error)
              </text>
            </g>
          )}
          {largest !== null && largest <= x.domain()[1]! && (
            <g className="pc-largest" transform={`translate(${x(largest)},0)`} data-size={largest}>
              <line y1={0} y2={ih} />
              <text x={4} y={10} className="rc-tick">
                largest that fits: {grouped(largest)}
              </text>
            </g>
          )}
          {rows?.map((r) => (
            <circle key={r.size} className={!r.fits ? 'sweep-oom' : 'sweep-ok'} cx={x(r.size)} cy={y(r.peakReserved)} r={r.size === size ? 4 : 2.5} onClick={() => setSize(r.size)}>
              <title>{`size ${grouped(r.size)}: reserved peak ${formatSize(r.peakReserved)} (${bandPercent(r.band, r.bandBelow)}), allocated peak ${formatSize(r.peakAllocated)}${r.fits ? '' : ', runs out of memory'}`}</title>
            </circle>
          ))}
        </g>
        <g transform={`translate(${M.left},${H - 6})`} className="pc-legend">
          {LEGEND.map(([cls, words], k) => (
            <text key={words} x={LEGEND.slice(0, k).reduce((a, [, w]) => a + w.length * 7 + 18, 0)} className={`rc-tick ${cls}`}>
              {words}
            </text>
          ))}
        </g>
      </svg>
    </div>
  );
}
