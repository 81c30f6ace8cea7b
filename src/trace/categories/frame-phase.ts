// Which part of a training or inference program a trace entry's stack was in: the forward pass,
// backward, the optimizer's step, zero_grad, building or moving the model, the data loader, or the
// program's own code. Read from the frames PyTorch records, innermost first: Python frames alone
// (stacks='python') or Python and C++ frames (stacks='all', the recorder's default), by the library
// functions each part runs through. The autograd engine runs backward on a thread of its own: with C++
// frames it is known by the engine's functions; with Python frames alone by having none (an entry with no
// frames is backward's when a forward came before it, see request-phases.ts), or by a custom Function's
// backward called from it. A checkpointed segment's recomputation has frames under checkpoint.py.
import type { Frame } from '../snapshot/snapshot';

export const enum Phase {
  /** No Python frames: the autograd engine's thread (backward), or a stack not recorded. */
  none = 0,
  forward = 1,
  backward = 2,
  optimizer = 3,
  zeroGrad = 4,
  /** Building the model, moving it to the GPU, loading weights. */
  init = 5,
  data = 6,
  /** The program's own code, outside all of the above (a training loop's torch.randn, a list append). */
  user = 7,
}

export const PHASE_NAMES = ['no stack', 'forward', 'backward', 'optimizer step', 'zero_grad', 'model setup', 'data loading', 'program code'] as const;

const path = (f: Frame): string => f.filename.replace(/\\/g, '/');

/** The autograd engine's own functions, on its device threads (C++ frames: stacks='all'). */
const ENGINE = /^torch::autograd::(python::Python)?Engine::/;

/** Each test, with the phase it marks. Backward wins wherever a frame marks it (a checkpoint's
 * recomputation runs forward code inside backward); otherwise the innermost frame that marks any phase
 * does (Lightning runs the forward and backward inside optimizer.step(closure): a forward there is a
 * forward), the first test in this order where one frame passes several. */
const MARKS: [Phase, (file: string, name: string) => boolean][] = [
  [
    Phase.backward,
    (file, name) =>
      (file.endsWith('torch/_tensor.py') && name === 'backward') ||
      (file.endsWith('torch/autograd/__init__.py') && (name === 'backward' || name === 'grad')) ||
      (file.endsWith('torch/autograd/graph.py') && name === '_engine_run_backward') ||
      ENGINE.test(name) ||
      // Activation checkpointing's recomputation, run from backward.
      (file.endsWith('torch/utils/checkpoint.py') && /backward|unpack|recompute/.test(name)),
  ],
  [Phase.zeroGrad, (_file, name) => name === 'zero_grad'],
  [
    Phase.optimizer,
    (file) => file.includes('torch/optim/') || file.includes('/optimization.py') || file.includes('bitsandbytes/optim') || file.includes('apex/optimizers'),
  ],
  [
    Phase.init,
    (file, name) =>
      (file.endsWith('torch/nn/modules/module.py') && ['_apply', 'to', 'cuda', 'to_empty', 'register_parameter', 'register_buffer', 'load_state_dict'].includes(name)) ||
      file.endsWith('torch/nn/init.py') ||
      file.endsWith('torch/nn/parameter.py') ||
      file.endsWith('torch/serialization.py') ||
      file.includes('safetensors/') ||
      name === 'reset_parameters' ||
      (file.includes('torch/nn/modules/') && name === '__init__') ||
      (file.includes('transformers/modeling_utils.py') && /init|from_pretrained|from_config/.test(name)),
  ],
  [Phase.data, (file) => file.includes('torch/utils/data/')],
  [
    Phase.forward,
    (file, name) =>
      (file.endsWith('torch/nn/modules/module.py') && (name === '_call_impl' || name === '_wrapped_call_impl')) ||
      file.endsWith('torch/nn/functional.py') ||
      // The end of an autocast region frees its cast weights: the forward's.
      (file.endsWith('torch/amp/autocast_mode.py') && name === '__exit__') ||
      // A torch.compile'd graph's generated code.
      /torchinductor_[^/]*\//.test(file),
  ],
];

/** The phase a stack (innermost frame first) was in. */
export function phaseOfFrames(frames: readonly Frame[]): Phase {
  if (frames.length === 0) return Phase.none;
  // The autograd engine's thread calling a custom Function's backward (BackwardCFunction.apply), with no
  // program frame under it: a reentrant checkpoint frees its recomputed graph there, and a compiled
  // graph's backward runs there. Its outermost Python frame (C++ frames may lie beyond).
  const outer = frames.findLast((f) => f.filename.endsWith('.py'));
  if (outer && outer.name === 'apply' && path(outer).endsWith('torch/autograd/function.py')) return Phase.backward;
  let innermost = -1;
  for (const f of frames) {
    const file = path(f);
    for (let k = 0; k < MARKS.length; k++) {
      if (!MARKS[k]![1](file, f.name)) continue;
      if (k === 0) return Phase.backward;
      if (innermost < 0) innermost = k;
      break;
    }
  }
  return innermost >= 0 ? MARKS[innermost]![0] : Phase.user;
}

/** A phase the program named in user_metadata (torch.cuda.memory._set_memory_metadata), which wins
 * over the frames: "step 3 backward", "optimizer". */
export function phaseOfMetadata(text: string): Phase | null {
  if (/zero_grad/i.test(text)) return Phase.zeroGrad;
  if (/\bbackward\b/i.test(text)) return Phase.backward;
  if (/\boptim/i.test(text)) return Phase.optimizer;
  if (/\bforward\b/i.test(text)) return Phase.forward;
  return null;
}
