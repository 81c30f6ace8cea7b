// The actions of a trace entry, in the order of PyTorch's TraceEntry::Action (CUDACachingAllocator.h),
// under the names torch/csrc/cuda/memory_snapshot.cpp writes. The one list: the allocator's events,
// the trace columns read from a snapshot and the checks of a snapshot file all use it.

export const enum Action {
  alloc = 0,
  free_requested = 1,
  free_completed = 2,
  segment_alloc = 3,
  segment_free = 4,
  segment_map = 5,
  segment_unmap = 6,
  snapshot = 7,
  oom = 8,
  /** A user-defined marker (TraceEntry::USER_DEFINED); not an allocator event. */
  user_defined = 9,
}

/** ACTION_NAMES[Action.x] === 'x'. */
export const ACTION_NAMES = [
  'alloc',
  'free_requested',
  'free_completed',
  'segment_alloc',
  'segment_free',
  'segment_map',
  'segment_unmap',
  'snapshot',
  'oom',
  'user_defined',
] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

const CODES = new Map<unknown, number>(ACTION_NAMES.map((name, code) => [name, code]));

/** The code of a known action name, -1 for anything else. */
export function actionCode(name: unknown): number {
  // The three most common first, by identity (the pickle reader shares one string per name).
  if (name === 'alloc') return Action.alloc;
  if (name === 'free_requested') return Action.free_requested;
  if (name === 'free_completed') return Action.free_completed;
  return CODES.get(name) ?? -1;
}
