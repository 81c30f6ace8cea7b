// One requestAnimationFrame for every view that draws outside React renders (the timeline's SVG, the
// segment maps' canvases), as Perfetto's raf_scheduler: each asks for a draw, and all the draws asked
// for before a frame run in it, once each. Page only (it needs requestAnimationFrame).
import { measure } from './timing';

const pending = new Set<() => void>();
let frame = 0;
const drawnWaiters: (() => void)[] = [];

function runFrame(): void {
  const start = performance.now();
  frame = 0;
  const draws = [...pending];
  pending.clear();
  for (const draw of draws) {
    try {
      draw();
    } catch (e) {
      console.error(e);
    }
  }
  // For benchmarks: the frame's own work (the seek's page part).
  measure('splitscope:frame', start);
  for (const resolve of drawnWaiters.splice(0)) resolve();
}

/** Runs `draw` in the next frame (asking again before then changes nothing). */
export function scheduleDraw(draw: () => void): void {
  pending.add(draw);
  if (!frame) frame = requestAnimationFrame(runFrame);
}

/** Takes back a draw not yet run (a view that goes away). */
export function cancelDraw(draw: () => void): void {
  pending.delete(draw);
}

/** True while `draw` waits for its frame. */
export function drawPending(draw: () => void): boolean {
  return pending.has(draw);
}

/**
 * Resolves once the draws asked for so far have run; at once when none wait. A hidden tab gets no
 * frames: after `timeoutMs` it resolves anyway rather than hang.
 */
export function framesDrawn(timeoutMs = 250): Promise<void> {
  if (pending.size === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    drawnWaiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
