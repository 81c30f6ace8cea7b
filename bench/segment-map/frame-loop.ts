// The benchmark's frames: zoom from the whole map in to 1/64 of it and back while panning across,
// each frame timed from the view change to the GPU finishing it. Shared by the browser harness
// (canvas) and the device run (Dawn for Node, an offscreen texture).
import { fitSegmentMap } from '../../src/plot/segment-map-geometry';
import type { SegmentMapView } from '../../src/gpu/segment-map/segment-map-painter';
import type { MemoryLayout } from '../../src/trace/measures/memory-layout';

export interface FrameFigures {
  backend: string;
  /** Per frame: view change to GPU done, and the CPU part of it (culling, level of detail, encoding). */
  ms: number[];
  cpu: number[];
  /** The first frame of a new layout: packing, instances, upload, draw. */
  setSceneMs: number;
}

export const WIDTH = 1200;
export const HEIGHT = 420;

export async function frameLoop(
  layout: MemoryLayout,
  n: number,
  setScene: (layout: MemoryLayout, geometry: ReturnType<typeof fitSegmentMap>) => void,
  draw: (view: SegmentMapView) => void,
  finished: () => Promise<void>,
): Promise<Omit<FrameFigures, 'backend'>> {
  const t0 = performance.now();
  const g = fitSegmentMap(layout, HEIGHT);
  setScene(layout, g);
  draw({ x0: 0, pxPerByte: WIDTH / g.rowBytes, width: WIDTH, height: HEIGHT, dpr: 1 });
  await finished();
  const setSceneMs = performance.now() - t0;
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < n; i++) {
    const k = 2 ** (6 * Math.abs(Math.sin((i / n) * Math.PI)));
    const pxPerByte = (k * WIDTH) / g.rowBytes;
    const x0 = (g.rowBytes - WIDTH / pxPerByte) * (i / n);
    const start = performance.now();
    draw({ x0, pxPerByte, width: WIDTH, height: HEIGHT, dpr: 1 });
    cpu.push(performance.now() - start);
    await finished();
    ms.push(performance.now() - start);
  }
  return { ms, cpu, setSceneMs };
}
