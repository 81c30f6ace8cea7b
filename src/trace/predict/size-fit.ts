// The largest size whose predicted run fits a cap, per config side by side ("batch 27 fits under the
// defaults, 31 under expandable_segments:True"), and how near the first size that runs out came: the
// cap it would need, and whether it fits with its cuDNN convolutions' workspaces left out. cuDNN picks
// an algorithm per shape, so the workspaces at a size never recorded are the one part of a prediction
// the recordings cannot tell (the rest replays as the real run does, to the byte, on the programs
// checked): a size that fits without them is one the algorithms cuDNN picks there decide. One search
// for the CLI, the MCP server and the page's worker, which differ only in how a size is replayed.
import type { Capacity } from '../../allocator/capacity';
import { configToString, type AllocatorConfig } from '../../allocator/config';
import { grouped } from '../../lib/grouped';
import { replay, type ReplayOptions } from '../replay/replay';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { editStream } from '../stream/stream-edit';
import { smallestCap, smallestCapText } from '../sweep/memory-needed';
import { largestFit, type LargestFit } from './largest-fit';

export interface SizeFit extends LargestFit {
  conf: string;
  /** The smallest cap, to 2 MiB, the first failing size's predicted run fits (null: none failed, or none found). */
  firstFailingNeeds: number | null;
  /** Whether the first failing size fits with its cuDNN workspaces left out (null: none failed, or it has none known). */
  firstFailingFitsWithoutWorkspaces: boolean | null;
}

/** The predicted run at `size` under `config`, ready to replay (its options carry the cap). */
export type RunAt = (size: number, config: AllocatorConfig) => { stream: RequestStream; options: ReplayOptions };

/** The largest fitting size under each of `configs`, searched from `start` up to `limit`. */
export function sizeFits(runAt: RunAt, configs: readonly AllocatorConfig[], capacity: Capacity, start: number, limit: number): SizeFit[] {
  const fits = (stream: RequestStream, options: ReplayOptions): boolean => replay(stream, { ...options, capacity, statsOnly: true }).ooms.length === 0;
  return configs.map((config) => {
    const fit = largestFit((size) => {
      const { stream, options } = runAt(size, config);
      return fits(stream, { ...options, config });
    }, start, limit);
    let firstFailingNeeds: number | null = null;
    let firstFailingFitsWithoutWorkspaces: boolean | null = null;
    if (fit.firstFailing !== null) {
      const { stream, options } = runAt(fit.firstFailing, config);
      firstFailingNeeds = smallestCap(stream, { ...options, config }, capacity.bytes);
      if (stream.cudnnWorkspaces.size > 0) firstFailingFitsWithoutWorkspaces = fits(withoutCudnnWorkspaces(stream), { ...options, config });
    }
    return { conf: configToString(config), ...fit, firstFailingNeeds, firstFailingFitsWithoutWorkspaces };
  });
}

/** `stream` as if its cuDNN convolutions took no workspace (the last engine configs cuDNN falls back to). */
export function withoutCudnnWorkspaces(stream: RequestStream): RequestStream {
  const drop = new Set<number>();
  for (let i = 0; i < stream.length; i++) {
    // A workspace's alloc and its free; a deferred free's completion refers to its id, which no workspace has.
    if (stream.cudnnWorkspaces.has(stream.id[i]!) && (stream.kind[i] === RequestKind.alloc || stream.kind[i] === RequestKind.free)) drop.add(i);
  }
  return editStream(stream, { drop }).stream;
}

/** "(45 runs out of memory: it needs 2.32 GiB, 1.8% over the cap; ...)", said after the largest size, or ''. */
export function firstFailingText(fit: Pick<SizeFit, 'firstFailing' | 'firstFailingNeeds' | 'firstFailingFitsWithoutWorkspaces'>, cap: number): string {
  if (fit.firstFailing === null) return '';
  const size = grouped(fit.firstFailing);
  const cudnn = fit.firstFailingFitsWithoutWorkspaces
    ? `; with its cuDNN workspaces left out it fits, so the algorithms cuDNN picks at ${size}, which recordings at other sizes cannot tell, decide it`
    : '';
  return ` (${size} runs out of memory${smallestCapText(fit.firstFailingNeeds, cap)}${cudnn})`;
}

/** What a prediction says of its cuDNN workspaces (Prediction.cudnnWorkspaces, above 0). */
export const cudnnWorkspacesText = (n: number): string =>
  `${grouped(n)} of the allocations are cuDNN convolutions' workspaces, sized by the algorithm cuDNN picks at each size, which recordings at other sizes cannot tell.`;
