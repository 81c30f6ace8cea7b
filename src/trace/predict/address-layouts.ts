// Near a cap, where the CUDA driver puts a run's segments can decide whether it fits: the allocator takes
// the lowest-addressed of equally sized free blocks, so the segments' order in the address space shapes
// which blocks split and which stay whole. The driver does not place them the same way twice: one program
// at one size, recorded in two processes on one H100, has two different layouts (vit at 13 and 14), and
// two runs of it at 15 under one cap ran out at different requests. A predicted run has no layout of its
// own. It is judged under several: the driver model's (the run on screen), and each recording's own
// cudaMalloc addresses (its segments of a size it made, where it made them; the driver model places the
// rest). A size fits when most of them fit, and a split is said, never hidden.
import type { Capacity } from '../../allocator/capacity';
import { replay, type ReplayOptions, type ReplayResult } from '../replay/replay';
import type { RequestStream } from '../stream/request-stream';

/** Where a recording's segments landed: its cudaMalloc calls and expandable mappings, in order. */
export interface AddressLayout {
  /** The recording's name. */
  name: string;
  segments: RequestStream['recordedSegments'];
  mappings: RequestStream['recordedMappings'];
}

/** The driver model's layout: the run a predicted source shows. */
export const DRIVER_MODEL = 'the driver model';

/** How a predicted run fared under each layout it was judged by, the driver model's first. */
export interface LayoutVerdict {
  /** Whether most of the layouts tried fit. */
  fits: boolean;
  /** Each layout tried, in order, and whether it fit (lazily: the tries stop once most agree). */
  layouts: { name: string; fits: boolean }[];
  /** How many layouts there are in all (some may be untried). */
  of: number;
}

/**
 * The layouts' peaks differ by up to 3.5% on the programs recorded (vit-12's real run, replayed under
 * other recordings' addresses): a driver-model run that neither retried nor came this close to the cap
 * fits under any of them, and is not replayed again.
 */
const NEAR_CAP = 0.95;

/** `stream` with `layout`'s segment addresses, to replay with addresses: 'recorded'. */
function withLayout(stream: RequestStream, layout: AddressLayout): RequestStream {
  return { ...stream, recordedSegments: layout.segments, recordedMappings: layout.mappings };
}

/**
 * Whether `stream` (a predicted run; `options` place it by the driver model) fits `capacity` under most
 * of its layouts: the driver model's (`driver`, where the caller has replayed it), then each of `layouts`,
 * until most agree; `all`: every one (what the output says of a size at the edge). A driver-model run that
 * fits far below the cap, or runs out asking for more than the cap less what is allocated, is not replayed again.
 */
export function verdictUnderLayouts(
  stream: RequestStream,
  options: ReplayOptions,
  capacity: Capacity,
  layouts: readonly AddressLayout[],
  { all = false, driver }: { all?: boolean; driver?: Pick<ReplayResult, 'ooms' | 'stats'> } = {},
): LayoutVerdict {
  const of = 1 + layouts.length;
  const verdictOnly = { ...options, capacity, statsOnly: true, untilOom: true } as const;
  const run = driver ?? replay(stream, verdictOnly);
  const fitsDriver = run.ooms.length === 0;
  const tried = [{ name: DRIVER_MODEL, fits: fitsDriver }];
  // Far from the cap, the driver model's verdict stands for every layout: a run that never retried and
  // peaked well below it. (One that runs out is tried under the others: replays that stop at their first
  // OOM cost little where it comes early.)
  const far = fitsDriver && run.stats['num_alloc_retries'] === 0 && run.stats['reserved_bytes.all.peak']! < NEAR_CAP * capacity.bytes;
  // Past the cap however the segments lie: the request that ran out asks, with what was allocated then,
  // for more than the cap holds (every layout reserves at least what is allocated). Known from a run that
  // stopped at that OOM, not from a whole run the caller passes.
  const hopeless = !fitsDriver && !driver && run.stats['allocated_bytes.all.current']! + run.ooms[0]!.size > capacity.bytes;
  const need = Math.floor(of / 2) + 1;
  for (const layout of far || hopeless ? [] : layouts) {
    const fitting = tried.filter((t) => t.fits).length;
    if (!all && (fitting >= need || tried.length - fitting >= need)) break;
    const r = replay(withLayout(stream, layout), { ...verdictOnly, addresses: 'recorded' });
    tried.push({ name: layout.name, fits: r.ooms.length === 0 });
  }
  return { fits: far || (!hopeless && tried.filter((t) => t.fits).length >= need), layouts: tried, of };
}

/** Whether `v` is all it can be: every layout tried, or the driver model's alone (far from the cap, past
 * it under any layout, or no other layout): asked again with `all`, it would say the same. */
export const isSettled = (v: LayoutVerdict): boolean => v.layouts.length === v.of || v.layouts.length === 1;

/** Whether the layouts tried disagree. */
export const isSplit = (v: LayoutVerdict): boolean => v.layouts.some((l) => l.fits) && v.layouts.some((l) => !l.fits);

/** "under 2 of the 3 address layouts tried, not the driver model's: where ... decides it", after "fits" or "runs out of memory". */
export function splitText(v: LayoutVerdict): string {
  const majority = v.layouts.filter((l) => l.fits === v.fits);
  const minority = v.layouts.filter((l) => l.fits !== v.fits).map((l) => (l.name === DRIVER_MODEL ? "the driver model's" : `${l.name}'s`));
  return (
    `under ${majority.length} of the ${v.layouts.length} address layouts tried, not ${minority.join(' or ')}: ` +
    'where the CUDA driver puts the segments, which differs from run to run, decides it'
  );
}

/** A note for a predicted run whose layouts split (else null): what it does under each, and the verdict. */
export function layoutNote(v: LayoutVerdict): string | null {
  if (!isSplit(v)) return null;
  const under = (fits: boolean) => v.layouts.filter((l) => l.name !== DRIVER_MODEL && l.fits === fits).map((l) => l.name);
  const driverFits = v.layouts[0]!.fits;
  const others = under(!driverFits);
  const same = under(driverFits);
  const verb = (fits: boolean) => (fits ? 'fits' : 'runs out of memory');
  return (
    `Near the cap, where the CUDA driver puts the segments decides this run, and it does not put them the same way every run: ` +
    `with its segments where the driver model puts them (the run shown) it ${verb(driverFits)}` +
    (same.length ? `, as at the addresses of ${same.join(' and ')}` : '') +
    `; at the addresses of ${others.join(' and ')} it ${verb(!driverFits)}. ` +
    `Most of the ${v.layouts.length} layouts tried ${v.fits ? 'fit' : 'run out'}, and so the size counts as ${v.fits ? 'fitting' : 'running out'} where the largest size that fits is sought.`
  );
}
