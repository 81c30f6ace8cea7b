// Views that draw outside React renders (canvases) say here how to wait for their pending frame and
// the GPU's work on it, so that window.splitscope.ready() can include drawing without the state layer
// knowing the views.
import { framesDrawn } from '../lib/frame-scheduler';
const waits = new Set<() => Promise<void>>();

/** Registers a view's wait; returns its unregistration. */
export function registerDrawWait(wait: () => Promise<void>): () => void {
  waits.add(wait);
  return () => {
    waits.delete(wait);
  };
}

/** The next animation frame, or 250 ms in a hidden tab, where frames do not come. */
export function nextFrame(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 250);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Resolves when React has committed the latest state and every registered view has drawn it. */
export async function drawsSettled(): Promise<void> {
  // One frame: React commits and the views schedule their draws from its effects; then those draws.
  await nextFrame();
  await framesDrawn();
  await Promise.all([...waits].map((wait) => wait()));
}
