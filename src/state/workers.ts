// The page's workers, made in one place: from Vite's worker chunks (the built page and the dev server),
// or from the sources a self-contained report carries (splitscope report: a page opened from file://
// can load no module chunk, but it can start a worker from a Blob of its own).
export type WorkerKind = 'replay' | 'hash' | 'sweep' | 'digest' | 'planner';

declare global {
  // Set by the report's page before the app's script: each worker's whole source, bundled as one script.
  var __SPLITSCOPE_WORKERS__: Partial<Record<WorkerKind, string>> | undefined;
}

const blobUrls = new Map<WorkerKind, string>();

export function startWorker(kind: WorkerKind): Worker {
  const inline = globalThis.__SPLITSCOPE_WORKERS__?.[kind];
  if (inline !== undefined) {
    let url = blobUrls.get(kind);
    if (!url) blobUrls.set(kind, (url = URL.createObjectURL(new Blob([inline], { type: 'text/javascript' }))));
    return new Worker(url);
  }
  // Literal URLs, one per worker: Vite finds each `new Worker(new URL(...))` and bundles that worker.
  switch (kind) {
    case 'replay':
      return new Worker(new URL('../worker/replay-worker.ts', import.meta.url), { type: 'module' });
    case 'hash':
      return new Worker(new URL('../worker/hash-worker.ts', import.meta.url), { type: 'module' });
    case 'sweep':
      return new Worker(new URL('../worker/sweep-worker.ts', import.meta.url), { type: 'module' });
    case 'digest':
      return new Worker(new URL('../worker/digest-worker.ts', import.meta.url), { type: 'module' });
    case 'planner':
      return new Worker(new URL('../gpu/stress/planner-worker.ts', import.meta.url), { type: 'module' });
  }
}
