// WGSL sources, each kernel with the shared declarations of shaders/arena.wgsl in front.
import arena from '../../../shaders/arena.wgsl?raw';
import fill from '../../../shaders/fill.wgsl?raw';
import streamCopy from '../../../shaders/stream-copy.wgsl?raw';
import streamRead from '../../../shaders/stream-read.wgsl?raw';
import streamWrite from '../../../shaders/stream-write.wgsl?raw';
import touch from '../../../shaders/touch.wgsl?raw';
import verify from '../../../shaders/verify.wgsl?raw';

export const SHADERS = {
  fill: arena + fill,
  touch: arena + touch,
  verify: arena + verify,
  streamWrite: arena + streamWrite,
  streamRead: arena + streamRead,
  streamCopy: arena + streamCopy,
} as const;

export type KernelName = keyof typeof SHADERS;
