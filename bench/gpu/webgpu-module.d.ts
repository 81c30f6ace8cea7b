// Types for Dawn for Node (npm "webgpu"), present only on the device machine (see .gpu/).
declare module 'webgpu' {
  export function create(flags: string[]): GPU;
  export const globals: Record<string, unknown>;
}
