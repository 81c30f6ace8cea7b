// Where each allocation of a source was made: the stack its trace entry recorded, or, for a block
// allocated before the trace began and still live at the end (a ring buffer's), the stack the
// snapshot's segments keep for it. The same answer whatever config replays the requests: a
// what-if changes where blocks land, not which code asked for them.
import type { Frame, Snapshot } from '../snapshot/snapshot';
import type { TraceDetails } from '../snapshot/trace-columns';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { NO_STACK, stackPath, stackSite, type StackOf } from './memory-by-stack';

export const BEFORE_TRACE = '(allocated before the recording began)';

/** The plain data of an allocation's stacks (what a worker thread hands back). */
export interface StackKeys {
  /** Each logical id's stack as a key: its frame list's index, or -1 (no stack), -2 (before the trace). */
  keyOf: Int32Array;
  /** The frame lists the keys index. */
  lists: readonly (readonly Frame[])[];
}

export interface AllocationStacks extends StackKeys {
  stackOf: StackOf;
  /** The stack a key stands for. */
  stackOfKey(key: number): readonly Frame[] | string;
}

/** `details`: the trace's times and frames (absent: every stack is unknown). */
export function allocationStacks(stream: RequestStream, details: TraceDetails | undefined, snapshot: Snapshot | null): AllocationStacks {
  const lists: (readonly Frame[])[] = details ? [...details.frameLists] : [];
  const keyOf = new Int32Array(stream.idCount).fill(-1);
  if (details) {
    for (let i = 0; i < stream.length; i++) {
      if (stream.kind[i] !== RequestKind.alloc) continue;
      const entry = stream.source[i]!;
      keyOf[stream.id[i]!] = entry >= 0 ? (details.frames[entry] ?? -1) : -1;
    }
  }
  // Blocks from before the trace: the final snapshot's stack where the block lived to the end.
  const finalFrames = new Map<number, Frame[]>();
  for (const s of snapshot?.segments ?? []) {
    for (const b of s.blocks) if (b.state !== 'inactive' && b.frames && b.frames.length > 0) finalFrames.set(b.address, b.frames);
  }
  for (const b of stream.initialBlocks) {
    const frames = b.source === undefined ? finalFrames.get(b.addr) : undefined;
    keyOf[b.id] = frames ? lists.push(frames) - 1 : -2;
  }
  return stacksOfKeys({ keyOf, lists });
}

/** Whether any stack has C++ frames (stacks='all', _record_memory_history's default): their names are
 * qualified (torch::unwind::unwind(), at::native::...), which no Python function's is. */
export function hasCppFrames(stacks: StackKeys): boolean {
  return stacks.lists.some((frames) => frames.some((f) => f.name.includes('::')));
}

export function stacksOfKeys({ keyOf, lists }: StackKeys): AllocationStacks {
  const stackOfKey = (key: number): readonly Frame[] | string => (key >= 0 ? lists[key]! : key === -2 ? BEFORE_TRACE : NO_STACK);
  return {
    keyOf,
    lists,
    stackOfKey,
    stackOf: (id) => (id >= 0 && id < keyOf.length ? stackOfKey(keyOf[id]!) : NO_STACK),
  };
}

/** What a stack view selects: a node of the tree (its path of frames from the root) or an allocation site. */
export type StackSelection = { path: readonly string[] } | { site: string };

/** Whether an allocation falls in `selection`: its stack (noise folded, outermost first) begins with
 * the path, or its site (stackSite) is the site. */
export function stackMatcher(stacks: AllocationStacks, selection: StackSelection): (id: number) => boolean {
  if ('site' in selection) return matchStacks(stacks, (stack) => stackSite(stack) === selection.site);
  const { path } = selection;
  return matchStacks(stacks, (stack) => {
    const p = stackPath(stack);
    return path.every((label, i) => p[i] === label);
  });
}

/** Whether an allocation's stack passes `test`, which runs once per distinct stack (a million ids share a few thousand). */
export function matchStacks(stacks: AllocationStacks, test: (stack: readonly Frame[] | string) => boolean): (id: number) => boolean {
  const byKey = new Map<number, boolean>();
  return (id) => {
    const key = stacks.keyOf[id] ?? -1;
    let m = byKey.get(key);
    if (m === undefined) byKey.set(key, (m = test(stacks.stackOfKey(key))));
    return m;
  };
}
