// Which stack frames say nothing about the program: the unwinder's own, the interpreter's and the
// dispatcher's. The same rules as memory_viz (torch/utils/viz/MemoryViz.js, frameFilter), so that a
// stack reads here as it does there.
import { UNKNOWN_LINE, type Frame } from '../snapshot/snapshot';

const NOISE_FUNCTIONS = ['unwind::unwind', 'CapturedTraceback::gather', 'gather_with_cpp', '_start', '__libc_start_main', 'PyEval_', 'PyObject_', 'PyFunction_'];
const NOISE_FILES = [
  'core/boxing',
  '/Register',
  '/Redispatch',
  'pythonrun.c',
  'Modules/main.c',
  'Objects/call.c',
  'Objects/methodobject.c',
  'pycore_ceval.h',
  'ceval.c',
  'cpython/abstract.h',
];

/** Whether a frame is noise, folded out of every stack shown. */
export function isNoiseFrame(f: Frame): boolean {
  return NOISE_FUNCTIONS.some((n) => f.name.includes(n)) || NOISE_FILES.some((n) => f.filename.includes(n));
}

/** A frame as one line: `name file:line`. */
export function frameLabel(f: Frame): string {
  return f.line === UNKNOWN_LINE ? `${f.name} ${f.filename} (line unknown)` : `${f.name} ${f.filename}:${f.line}`;
}
