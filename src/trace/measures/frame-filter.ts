// Which stack frames say nothing about the program: the unwinder's own, the interpreter's and the
// dispatcher's, as memory_viz folds them (torch/utils/viz/MemoryViz.js, frameFilter), and on a stack
// with C++ frames (the recorder's default, stacks='all') the caching allocator's own, the tensor-making
// plumbing under every op and the threads' start: what is left innermost is the op or autograd node
// that asked, or the program's Python line, the same site a stacks='python' recording names.
import { UNKNOWN_LINE, type Frame } from '../snapshot/snapshot';

const NOISE_FUNCTIONS = [
  'unwind::unwind',
  'CapturedTraceback::gather',
  'gather_with_cpp',
  '_start',
  '__libc_start_main',
  'PyEval_',
  'PyObject_',
  'PyFunction_',
  // The caching allocator, the dispatcher and the tensor-making plumbing below each op.
  'CUDACachingAllocator::',
  'c10::impl::',
  'c10::Dispatcher::',
  'c10::BoxedKernel',
  'c10::KernelFunction',
  'c10::OperatorHandle',
  'wrap_kernel_functor',
  'at::detail::empty_',
  'at::native::empty_',
  'at::empty_',
  'at::TensorBase::',
  'c10::TensorImpl',
  'c10::StorageImpl',
  'c10::make_intrusive',
  'at::meta::structured_',
  'create_out(',
  'set_output_raw_strided',
  '::redispatch(',
  'wrapper_CUDA__empty',
  'wrapper_CUDA_memory_format_empty',
  'at::_ops::empty',
  'torch::autograd::VariableType::',
  'at::TensorIteratorBase::',
  'at::TensorIteratorConfig',
  // A thread's start.
  'execute_native_thread_routine',
  'start_thread',
  '__clone',
  'pthread_',
  'std::error_code::default_error_condition',
];
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

/** The interpreter's own C functions, between a stack's Python frames where C++ frames are recorded. */
const INTERPRETER = /^(_?Py|__libc_|method_vectorcall|cfunction_|slot_tp_|vectorcall)/;

/** Whether a frame is noise, folded out of every stack shown. */
export function isNoiseFrame(f: Frame): boolean {
  return (
    NOISE_FUNCTIONS.some((n) => f.name.includes(n)) ||
    NOISE_FILES.some((n) => f.filename.includes(n)) ||
    (!f.filename.endsWith('.py') && INTERPRETER.test(f.name))
  );
}

/** Whether a frame is the program's Python (a .py file), which a site prefers to any C++ frame inside it. */
export function isPythonFrame(f: Frame): boolean {
  return f.filename.endsWith('.py');
}

/** A C++ function's name without its return type, template arguments and parameters
 * ("at::native::gpu_reduce_kernel" for "void at::native::gpu_reduce_kernel<float, ...>(at::TensorIterator&, ...)"):
 * a label to read, as memory_viz's are long. A Python function's name is itself. */
export function functionName(name: string): string {
  if (!name.includes('::')) return name;
  let out = '';
  let depth = 0;
  const plain = name.replaceAll('(anonymous namespace)', '{anon}');
  for (const c of plain) {
    if (c === '<') depth++;
    else if (c === '>') depth = Math.max(0, depth - 1);
    else if (depth === 0) {
      if (c === '(') break;
      out += c;
    }
  }
  return (out.trim().split(' ').at(-1) ?? out).replaceAll('{anon}', '(anonymous namespace)');
}

/** A frame as one line: `name file:line`. */
export function frameLabel(f: Frame): string {
  const name = functionName(f.name);
  return f.line === UNKNOWN_LINE ? `${name} ${f.filename} (line unknown)` : `${name} ${f.filename}:${f.line}`;
}
