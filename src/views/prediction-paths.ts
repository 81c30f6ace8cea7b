// The SVG paths of a predicted run's curve, shared by the size control's sparkline and the prediction
// chart: a figure against the size, and peak reserved's error band (wider above than below).
import type { CurvePoint } from '../worker/replay-protocol';

type Scale = (v: number) => number;

/** A polyline through `value` of each row, at its size. */
export function curvePath(rows: readonly CurvePoint[] | null, x: Scale, y: Scale, value: (r: CurvePoint) => number): string {
  return (rows ?? []).map((r, i) => `${i ? 'L' : 'M'}${x(r.size).toFixed(1)},${y(value(r)).toFixed(1)}`).join('');
}

/** The band around peak reserved: its top edge left to right, its bottom edge back. */
export function bandPath(rows: readonly CurvePoint[], x: Scale, y: Scale): string {
  const bottom = [...rows].reverse().map((r) => `L${x(r.size).toFixed(1)},${y(r.peakReserved * (1 - r.bandBelow)).toFixed(1)}`);
  return `${curvePath(rows, x, y, (r) => r.peakReserved * (1 + r.band))}${bottom.join('')}Z`;
}
