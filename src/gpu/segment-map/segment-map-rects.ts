// The segment map's rectangles for one view in CSS px: segment bands and blocks of the level of
// detail that suits the zoom, clipped to the view. The Canvas 2D fallback fills them; exports write them.
import { FLAG_MARKED, FLAG_OVERSIZE, FLAG_SEGMENT, INSTANCE_WORDS } from '../../plot/segment-map-geometry';
import type { SegmentMapScene, SegmentMapView } from './segment-map-painter';

export interface MapRect {
  left: number;
  top: number;
  width: number;
  height: number;
  /** Index into PALETTE. */
  palette: number;
  oversize: boolean;
  /** A selection marks other blocks, not this one: drawn faint. */
  dimmed: boolean;
}

export function visibleRects(scene: SegmentMapScene, v: SegmentMapView, each: (r: MapRect) => void): void {
  const plan = scene.plan(v);
  const f = new Float32Array(plan.level.data);
  const flags = new Uint32Array(plan.level.data);
  const onePx = 1 / v.dpr;
  for (const [first, count] of plan.ranges) {
    for (let i = first; i < first + count; i++) {
      const o = i * INSTANCE_WORDS;
      const fl = flags[o + 5]!;
      let left = (f[o]! - v.x0 + f[o + 1]!) * v.pxPerByte;
      let width = f[o + 2]! * v.pxPerByte;
      let top = f[o + 3]!;
      let height = f[o + 4]!;
      if (fl & FLAG_SEGMENT) {
        // A band one device pixel wider than its blocks on every side: its outline.
        left -= onePx;
        width += 2 * onePx;
        top -= onePx;
        height += 2 * onePx;
      } else {
        // A hairline gap between neighbouring blocks when there is room for it.
        if (width > 4 * onePx) width -= onePx;
        width = Math.max(width, onePx);
      }
      const right = Math.min(left + width, v.width + 8);
      left = Math.max(left, -8);
      if (right <= left) continue;
      const dimmed = scene.marking && (fl & (FLAG_MARKED | FLAG_SEGMENT)) === 0;
      each({ left, top, width: right - left, height, palette: fl & 15, oversize: (fl & FLAG_OVERSIZE) !== 0, dimmed });
    }
  }
}
