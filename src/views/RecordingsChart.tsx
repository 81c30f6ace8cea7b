// Two recordings' timelines on one relative axis (each run from its first request to its last) and one
// byte axis: allocated solid, reserved dashed, a colour per recording.
import { useWidth } from './use-width';
import { line, scaleLinear } from 'd3';
import { useRef } from 'react';
import type { RecordingDigest } from '../trace/replay/recording-digest';
import { byteAxis } from './timeline-ticks';

const H = 200;
const M = { top: 10, right: 12, bottom: 22, left: 68 };
export const RECORDING_COLORS = ['light-dark(#1d5fd6, #60a5fa)', 'light-dark(#c2570c, #fb923c)'];

export function RecordingsChart({ digests }: { digests: RecordingDigest[] }) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref);
  const max = Math.max(1, ...digests.flatMap((d) => [...d.reserved, ...d.allocated]));
  const axis = byteAxis(max, 5);
  const iw = Math.max(1, width - M.left - M.right);
  const ih = H - M.top - M.bottom;
  const x = scaleLinear().domain([0, 1]).range([0, iw]);
  const y = scaleLinear().domain([0, axis.top]).range([ih, 0]);
  const path = (values: Float64Array): string =>
    line<number>()
      .x((_, i) => x(values.length > 1 ? i / (values.length - 1) : 0))
      .y((v) => y(v))(Array.from(values)) ?? '';
  return (
    <div className="recordings-chart" ref={ref}>
      <svg width={width} height={H} role="img" aria-label="Allocated and reserved bytes of each recording over its run">
        <g transform={`translate(${M.left},${M.top})`}>
          {axis.ticks.map((t) => (
            <g key={t} transform={`translate(0,${y(t)})`}>
              <line x2={iw} className="rc-grid" />
              <text x={-6} dy="0.32em" textAnchor="end" className="rc-tick">
                {axis.format(t)}
              </text>
            </g>
          ))}
          {[0, 0.25, 0.5, 0.75, 1].map((t) => (
            <text key={t} x={x(t)} y={ih + 16} textAnchor="middle" className="rc-tick">
              {t === 0 ? 'start' : t === 1 ? 'end' : `${t * 100}%`}
            </text>
          ))}
          {digests.map((d, k) => (
            <g key={k} style={{ color: RECORDING_COLORS[k % 2] }}>
              <path d={path(d.reserved)} className="rc-reserved" />
              <path d={path(d.allocated)} className="rc-allocated" />
            </g>
          ))}
        </g>
      </svg>
    </div>
  );
}
