// The largest size whose predicted run fits a cap, per config side by side ("batch 27 fits under the
// defaults, 31 under expandable_segments:True"), and how near the first size that runs out came: the
// cap it would need, and whether it fits with its cuDNN convolutions' workspaces left out. cuDNN picks
// an algorithm per shape, so the workspaces at a size never recorded are the one part of a prediction
// the recordings cannot tell (the rest replays as the real run does, to the byte, on the programs
// checked): a size that fits without them is one the algorithms cuDNN picks there decide. Each size is
// judged under several address layouts (address-layouts.ts), and where they split at the edge, it is
// said. One search for the CLI, the MCP server and the page's worker, which differ only in how a size
// is replayed.
import type { Capacity } from '../../allocator/capacity';
import { configToString, type AllocatorConfig } from '../../allocator/config';
import { grouped } from '../../lib/grouped';
import { replay, type ReplayOptions } from '../replay/replay';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { editStream } from '../stream/stream-edit';
import { smallestCap, smallestCapText } from '../sweep/memory-needed';
import { bandPercent, type BandWidths } from './prediction-band';
import { isSettled, isSplit, splitText, verdictUnderLayouts, type AddressLayout, type LayoutVerdict } from './address-layouts';
import { largestFit, type LargestFit } from './largest-fit';

export interface SizeFit extends LargestFit {
  conf: string;
  /** The smallest cap, to 2 MiB, the first failing size's predicted run fits (null: none failed, or none found). */
  firstFailingNeeds: number | null;
  /** Whether the first failing size fits with its cuDNN workspaces left out (null: none failed, or it has none known). */
  firstFailingFitsWithoutWorkspaces: boolean | null;
  /** The largest size's and the first failing size's verdicts under every address layout, where the layouts split (else null). */
  largestSplit: LayoutVerdict | null;
  firstFailingSplit: LayoutVerdict | null;
  /** The prediction's error band (relative, on peak reserved: prediction-band.ts) at the largest size and
   * at the first failing one (null: not measured), above the predicted peak and below it, and whether the
   * largest runs out under the cap less its band above (within the prediction's error of the cap). */
  largestBand: number | null;
  largestBandBelow: number | null;
  firstFailingBand: number | null;
  firstFailingBandBelow: number | null;
  largestWithin: boolean | null;
  /** The sizes within the prediction's error of the cap, where they reach past the largest and the
   * first failing size: [the largest that fits under the cap less the band above, the largest under the
   * cap plus the band below] (the band at the largest size); null where the band names no more than those two. */
  bandRange: [number, number] | null;
}

/** The prediction's error band on peak reserved at a size, relative, above and below (prediction-band.ts). */
export type BandOf = (size: number, config: AllocatorConfig) => BandWidths;

/** The predicted run at `size` under `config`, ready to replay (its options carry the cap; they place
 * segments by the driver model), and the recordings' address layouts it is also judged under. */
export type RunAt = (size: number, config: AllocatorConfig) => { stream: RequestStream; options: ReplayOptions; layouts: readonly AddressLayout[] };

/** The largest fitting size under each of `configs`, searched from `start` up to `limit`. */
export function sizeFits(runAt: RunAt, configs: readonly AllocatorConfig[], capacity: Capacity, start: number, limit: number, bandOf?: BandOf): SizeFit[] {
  return configs.map((config) => {
    const verdictAt = (size: number, all = false, edit: (s: RequestStream) => RequestStream = (s) => s): LayoutVerdict => {
      const { stream, options, layouts } = runAt(size, config);
      return verdictUnderLayouts(edit(stream), { ...options, config }, capacity, layouts, { all });
    };
    // Each size's verdict, kept: the edge sizes' are asked again with every layout, and most are settled.
    const judged = new Map<number, LayoutVerdict>();
    const fit = largestFit((size) => {
      const v = verdictAt(size);
      judged.set(size, v);
      return v.fits;
    }, start, limit);
    const splitAt = (size: number | null): LayoutVerdict | null => {
      if (size === null) return null;
      const known = judged.get(size);
      const v = known && isSettled(known) ? known : verdictAt(size, true);
      return isSplit(v) ? v : null;
    };
    let firstFailingNeeds: number | null = null;
    let firstFailingFitsWithoutWorkspaces: boolean | null = null;
    if (fit.firstFailing !== null) {
      const { stream, options } = runAt(fit.firstFailing, config);
      firstFailingNeeds = smallestCap(stream, { ...options, config }, capacity.bytes);
      if (stream.cudnnWorkspaces.size > 0) firstFailingFitsWithoutWorkspaces = verdictAt(fit.firstFailing, false, withoutCudnnWorkspaces).fits;
    }
    // The band at the edge: whether the first failing size might fit, or the largest might not, within the
    // prediction's error; where it reaches further than those two sizes, the sizes it spans (a search
    // from the edge each way). Each size is one replay to its first OOM under the cap less or plus the band.
    const fitsUnder = (bytes: number) => (size: number): boolean => {
      const { stream, options } = runAt(size, config);
      return replay(stream, { ...options, config, capacity: { kind: 'fraction', bytes }, statsOnly: true, untilOom: true }).ooms.length === 0;
    };
    const firstFailingBand = bandOf && fit.firstFailing !== null ? bandOf(fit.firstFailing, config) : null;
    const largestBand = bandOf && fit.largest !== null ? bandOf(fit.largest, config) : null;
    let largestWithin: boolean | null = null;
    let bandRange: [number, number] | null = null;
    if (largestBand !== null && fit.largest !== null) {
      // A size may fit where its real peak lies below the prediction by the band below, and surely fits
      // only where it would still fit were its real peak above it by the band above.
      const mayFit = fitsUnder(capacity.bytes / Math.max(0.05, 1 - largestBand.below));
      const surely = fitsUnder(capacity.bytes / (1 + largestBand.above));
      largestWithin = !surely(fit.largest);
      const past = fit.firstFailing !== null && fit.firstFailing + 1 <= limit && mayFit(fit.firstFailing + 1);
      const below = largestWithin && fit.largest > 1 && !surely(fit.largest - 1);
      if (past || below) {
        const hi = past ? largestFit(mayFit, fit.firstFailing! + 1, limit).largest ?? fit.firstFailing! : (fit.firstFailing ?? fit.largest);
        const lo = below ? largestFit(surely, 1, fit.largest - 1).largest ?? 0 : fit.largest;
        bandRange = [lo, hi];
      }
    }
    return {
      conf: configToString(config),
      ...fit,
      largestBand: largestBand?.above ?? null,
      largestBandBelow: largestBand?.below ?? null,
      firstFailingBand: firstFailingBand?.above ?? null,
      firstFailingBandBelow: firstFailingBand?.below ?? null,
      largestWithin,
      bandRange,
      firstFailingNeeds,
      firstFailingFitsWithoutWorkspaces,
      largestSplit: splitAt(fit.largest),
      firstFailingSplit: splitAt(fit.firstFailing),
    };
  });
}

/** The answer's words after the largest size where the band crosses the cap: "; every size from 60 to
 * 75 is within the prediction's error (±9.3%) of the cap: ..." where it spans more than two sizes, ", or 69 within the
 * prediction's error (±2.1%) of the cap" (the first failing size may fit), ", within the prediction's
 * error (±1.0%) of the cap: it may not fit" (nor may the largest), both at once, or ''. Never a bare
 * answer the band crosses. */
export function bandAnswer(
  fit: Pick<SizeFit, 'largest' | 'firstFailing' | 'firstFailingNeeds' | 'largestWithin' | 'largestBand' | 'largestBandBelow' | 'firstFailingBand' | 'firstFailingBandBelow' | 'bandRange'>,
  cap: number,
): string {
  if (fit.bandRange && fit.largestBand !== null) {
    const [lo, hi] = fit.bandRange;
    return `; every size from ${grouped(Math.max(1, lo))} to ${grouped(hi)} is within the prediction's error (${bandPercent(fit.largestBand, fit.largestBandBelow ?? fit.largestBand)}) of the cap: any of them may be the largest that fits`;
  }
  // The first failing size may fit where its real peak lies below the prediction by the band below.
  const nextBelow = fit.firstFailingBandBelow ?? fit.firstFailingBand;
  const next = fit.firstFailing !== null && fit.firstFailingNeeds !== null && nextBelow !== null && fit.firstFailingNeeds * (1 - nextBelow) <= cap;
  const self = fit.largest !== null && fit.largestWithin === true && fit.largestBand !== null;
  const above = Math.max(next ? fit.firstFailingBand! : 0, self ? fit.largestBand! : 0);
  const below = Math.max(next ? nextBelow! : 0, self ? (fit.largestBandBelow ?? fit.largestBand!) : 0);
  const band = bandPercent(above, below);
  if (next && self) return `, or ${grouped(fit.firstFailing!)}: both within the prediction's error (${band}) of the cap, either may fit or not`;
  if (next) return `, or ${grouped(fit.firstFailing!)} within the prediction's error (${band}) of the cap`;
  if (self) return `, within the prediction's error (${band}) of the cap: it may not fit`;
  return '';
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

/**
 * What --fit says of the edge, after the largest size, or '': "(45 runs out of memory: it needs 2.32
 * GiB, 1.8% over the cap; ...)", and where the address layouts split at the largest size or the next.
 */
export function edgeText(fit: Pick<SizeFit, 'largest' | 'firstFailing' | 'firstFailingNeeds' | 'firstFailingFitsWithoutWorkspaces' | 'largestSplit' | 'firstFailingSplit'>, cap: number): string {
  const parts: string[] = [];
  if (fit.largestSplit && fit.largest !== null) parts.push(`it fits ${splitText(fit.largestSplit)}`);
  if (fit.firstFailing !== null) {
    const size = grouped(fit.firstFailing);
    const cudnn = fit.firstFailingFitsWithoutWorkspaces
      ? `; with its cuDNN workspaces left out it fits, so the algorithms cuDNN picks at ${size}, which recordings at other sizes cannot tell, decide it`
      : '';
    const split = fit.firstFailingSplit ? ` ${splitText(fit.firstFailingSplit)}` : '';
    parts.push(`${size} runs out of memory${split}${smallestCapText(fit.firstFailingNeeds, cap)}${cudnn}`);
  }
  return parts.length ? ` (${parts.join('; ')})` : '';
}

/** What a prediction says of its cuDNN workspaces (Prediction.cudnnWorkspaces, above 0). */
export const cudnnWorkspacesText = (n: number): string =>
  `${grouped(n)} of the allocations are cuDNN convolutions' workspaces, sized by the algorithm cuDNN picks at each size, which recordings at other sizes cannot tell.`;
