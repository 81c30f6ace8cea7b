// Bundled for Chromium by bench/gpu.bench.ts: measures and leaves the figures on window.
import { measureGpu } from './gpu-figures';

const w = window as unknown as { gpuFigures: Promise<unknown> };
w.gpuFigures = measureGpu({ repeat: 2 });
