// SVG paths painted onto a 2D canvas as their computed styles say (fill, stroke, their opacities,
// stroke width and joins), so that CSS stays the one place their look is set and an SVG export still
// holds them as vectors. Why: the timeline's series are a few concave paths of thousands of vertices.
// Chromium's GPU rasterizer draws a layer with 8x MSAA once it holds 6 anti-aliased concave paths
// (cc's kMinNumberOfSlowPathsForMSAA); on a software GL (SwiftShader) that took ~100 ms a frame, the
// largest part of a slider step. A canvas whose context is read back (`willReadFrequently`) is kept
// in memory and drawn by the CPU: the same paths cost the main thread ~4 ms here (8 with 1.25 px
// lines: a stroke one device pixel wide is drawn as a hairline), once per new series (a slider step,
// an open; a seek moves only the SVG's cursor). An accelerated canvas was no better on SwiftShader
// (a 200 ms step).

/** Paints `paths` (in order) into `canvas`, sized `width` x `height` CSS px, their coordinates offset by
 * `origin`. A canvas among them, painted so before at the same size, is drawn as it is: paths that
 * change seldom (the timeline's category layers) are painted once, not on each slider step. */
export function paintPaths(
  canvas: HTMLCanvasElement,
  width: number,
  height: number,
  origin: { x: number; y: number },
  paths: readonly (SVGPathElement | HTMLCanvasElement)[],
): void {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(width * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) return;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, w, h);
  ctx.setTransform(dpr, 0, 0, dpr, dpr * origin.x, dpr * origin.y);
  for (const el of paths) {
    if (el instanceof HTMLCanvasElement) {
      ctx.save();
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.globalAlpha = 1;
      ctx.drawImage(el, 0, 0);
      ctx.restore();
      continue;
    }
    const d = el.getAttribute('d');
    if (!d) continue;
    const style = getComputedStyle(el);
    const path = new Path2D(d);
    const opacity = Number(style.opacity);
    if (style.fill !== 'none') {
      ctx.globalAlpha = opacity * Number(style.fillOpacity);
      ctx.fillStyle = style.fill;
      ctx.fill(path, style.fillRule === 'evenodd' ? 'evenodd' : 'nonzero');
    }
    const lineWidth = parseFloat(style.strokeWidth);
    if (style.stroke !== 'none' && lineWidth > 0) {
      ctx.globalAlpha = opacity * Number(style.strokeOpacity);
      ctx.strokeStyle = style.stroke;
      ctx.lineWidth = lineWidth;
      ctx.lineJoin = style.strokeLinejoin as CanvasLineJoin;
      ctx.stroke(path);
    }
  }
  ctx.globalAlpha = 1;
}
