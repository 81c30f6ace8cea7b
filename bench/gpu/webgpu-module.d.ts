// Types for Dawn for Node (npm "webgpu"), present only on the device machine (see .gpu/).
declare module 'webgpu' {
  export function create(flags: string[]): GPU;
  export const globals: Record<string, unknown>;
}

// comlink's adapter for Node's worker_threads, by its file (its types are beside it, under another name).
declare module 'comlink/dist/esm/node-adapter.mjs' {
  export { default } from 'comlink/dist/esm/node-adapter';
}
