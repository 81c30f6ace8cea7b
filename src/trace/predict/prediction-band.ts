// How far a prediction may be off, from what can be measured on the recordings themselves: each
// recording predicted from another's requests (what the alignment and the choice of skeleton cost),
// with three recordings or more each one predicted from the others alone (what the size laws cost,
// inside the recorded sizes and beyond them), and the allocations whose sizes no law tells (cuDNN's
// workspaces follow the algorithm it picks at each size, a reduction kernel's scratch its launch, and
// some only one recording has). The band is the largest error measured for where the target lies
// (inside the recorded sizes, or beyond them, scaled by how far), plus those allocations' share of the
// peak. A figure measured on the recordings, not a guarantee: the sources say what each measurement was.
import { configToString, type AllocatorConfig } from '../../allocator/config';
import { replay } from '../replay/replay';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { SizePredictor, type Prediction, type SizedRecording } from './predict-stream';

export interface Peaks {
  reserved: number;
  allocated: number;
}

/** One measurement: a recording's own peaks against its prediction. Errors are relative, signed
 * (predicted / real - 1). */
export interface BandSource {
  /** skeleton: `recording` predicted from another recording's requests (all recordings' sizes in the laws);
   * laws: `recording` predicted from the others alone. */
  kind: 'skeleton' | 'laws';
  recording: string;
  size: number;
  /** How far `size` lies outside the other recordings' sizes (1: inside). */
  extrapolation: number;
  reserved: number;
  allocated: number;
}

export interface PredictionBand {
  /** Half-widths, relative to the predicted peaks: above them (how much higher the real peaks may lie) ... */
  reserved: number;
  allocated: number;
  /** ... and below them, where the allocations whose size no law tells can lower a peak only by what they
   * hold there (were they gone), and raise it by up to their own size again: the band is wider above. */
  reservedBelow: number;
  allocatedBelow: number;
  /** The predicted peaks' ranges, [low, high] in bytes. */
  peakReserved: [number, number];
  peakAllocated: [number, number];
  /** How much the recordings' reserved-over-allocated share differs between neighbouring sizes (the
   * cache's fragmentation moves in whole segments, from size to size): part of the reserved half-width,
   * scaled by how far beyond the recorded sizes the target lies. */
  fragmentation: number;
  /** How far the allocations whose size no law tells (Prediction.librarySized: cuDNN workspaces,
   * reduction kernels' scratch, those only the skeleton has) could move the predicted peak allocated,
   * were each twice its size, relative to it (in both half-widths) ... */
  librarySized: number;
  /** ... of which cuDNN's workspaces. */
  cudnnWorkspaces: number;
  /** How far those allocations could lower the predicted peak allocated were they gone (in the half-widths below). */
  librarySizedBelow: number;
  sources: BandSource[];
  /** What the band could not measure, in words ('' when nothing). */
  unmeasured: string;
}

/** What the band allows for the size laws' error where it cannot measure it (two recordings), per unit
 * of extrapolation: an allowance, not a measurement (the held-out programs' laws erred up to 0.2% in
 * peak allocated where the library-sized allocations were counted apart), and said as one. */
const UNMEASURED_LAWS = 0.005;

const extrapolationOf = (size: number, others: readonly number[]): number => {
  const lo = Math.min(...others);
  const hi = Math.max(...others);
  return size > hi ? size / hi : size < lo ? lo / size : 1;
};

/** The uncapped peaks of `stream` under `config`, as a prediction is replayed (addresses simulated). */
export function peaksOf(stream: RequestStream, config: AllocatorConfig): Peaks {
  const { stats } = replay(stream, { config, addresses: 'simulated', statsOnly: true });
  return { reserved: stats['reserved_bytes.all.peak']!, allocated: stats['allocated_bytes.all.peak']! };
}

/** Measures a predictor's errors once (per config, and per skeleton), and gives the band at any prediction of it. */
export class BandMeter {
  private lawSources: BandSource[] | null = null;
  private readonly bySkeleton = new Map<SizedRecording, BandSource[]>();
  private real = new Map<SizedRecording, Peaks>();
  private overheadStep = 0;

  constructor(
    private readonly predictor: SizePredictor,
    private readonly config: AllocatorConfig,
  ) {}

  /** Each recording's own peaks (a replay each), how far their reserved-over-allocated share moves
   * between neighbours, and with three recordings or more each predicted from the others alone. */
  private base(): BandSource[] {
    if (this.lawSources) return this.lawSources;
    const { recordings } = this.predictor;
    this.real = new Map(recordings.map((r) => [r, peaksOf(r.stream, this.config)]));
    const overhead = [...recordings].sort((a, b) => a.size - b.size).map((r) => this.real.get(r)!.reserved / this.real.get(r)!.allocated);
    for (let k = 1; k < overhead.length; k++) this.overheadStep = Math.max(this.overheadStep, Math.abs(overhead[k]! - overhead[k - 1]!));
    const out: BandSource[] = [];
    if (recordings.length >= 3) {
      for (const r of recordings) {
        const others = recordings.filter((o) => o !== r);
        const alone = peaksOf(new SizePredictor(others).at(r.size).stream, this.config);
        out.push({ kind: 'laws', recording: r.name, size: r.size, extrapolation: extrapolationOf(r.size, others.map((o) => o.size)), ...this.error(alone, r) });
      }
    }
    return (this.lawSources = out);
  }

  private error(p: Peaks, r: SizedRecording): { reserved: number; allocated: number } {
    const real = this.real.get(r)!;
    return { reserved: p.reserved / real.reserved - 1, allocated: p.allocated / real.allocated - 1 };
  }

  /** The measurements a prediction from `skeleton`'s requests stands on: every other recording predicted
   * from them (its own sizes still in the laws: what the alignment and the skeleton cost), and the laws'. */
  sources(skeleton?: SizedRecording): BandSource[] {
    const laws = this.base();
    if (!skeleton) return laws;
    let own = this.bySkeleton.get(skeleton);
    if (!own) {
      own = this.predictor.recordings
        .filter((r) => r !== skeleton)
        .map((r) => ({ kind: 'skeleton' as const, recording: r.name, size: r.size, extrapolation: 1, ...this.error(peaksOf(this.predictor.at(r.size, skeleton).stream, this.config), r) }));
      this.bySkeleton.set(skeleton, own);
    }
    return [...own, ...laws];
  }

  /** Each recording's own peaks, replayed as a prediction is (uncapped, addresses simulated). */
  recordedPeaks(): ({ size: number } & Peaks)[] {
    this.base();
    return this.predictor.recordings.map((r) => ({ size: r.size, ...this.real.get(r)! }));
  }

  /** The band around `prediction`'s peaks (`peaks`: its replay's, under the meter's config). */
  bandAt(prediction: Prediction, peaks: Peaks): PredictionBand {
    const sources = this.sources(this.predictor.recordings.find((r) => r.name === prediction.skeleton.name && r.size === prediction.skeleton.size));
    const f = prediction.extrapolation ?? 1;
    // Inside the recorded sizes: the skeleton's cost and the laws' error measured inside. Beyond them:
    // the laws' error measured beyond, per unit of extrapolation, scaled to the target's.
    const width = (key: 'reserved' | 'allocated'): number => {
      let w = 0;
      for (const s of sources) {
        const e = Math.abs(s[key]);
        if (s.kind === 'skeleton' || s.extrapolation === 1) w = Math.max(w, e);
        else if (f > 1) w = Math.max(w, e * Math.max(1, Math.log(f) / Math.log(s.extrapolation)));
      }
      return w;
    };
    const [chosen, workspaces, chosenBelow] = liveAtPeak(prediction.stream, prediction.librarySized).map((b) => b / Math.max(1, peaks.allocated)) as [number, number, number];
    const fragmentation = this.overheadStep * Math.max(1, f);
    const lawsMeasured = sources.some((s) => s.kind === 'laws' && (f > 1 ? s.extrapolation > 1 : s.extrapolation === 1));
    const allowance = lawsMeasured ? 0 : UNMEASURED_LAWS * Math.max(1, f);
    const reserved = width('reserved') + chosen + fragmentation + allowance;
    const allocated = width('allocated') + chosen + allowance;
    const reservedBelow = width('reserved') + chosenBelow + fragmentation + allowance;
    const allocatedBelow = width('allocated') + chosenBelow + allowance;
    const unmeasured = lawsMeasured
      ? ''
      : `how the size laws err ${f > 1 ? 'beyond' : 'between'} the recorded sizes is not measured (it takes three recordings or more): ` +
        `the band allows ${bandPercent(allowance).slice(1)} for it`;
    return {
      reserved,
      allocated,
      reservedBelow,
      allocatedBelow,
      peakReserved: [peaks.reserved * Math.max(0, 1 - reservedBelow), peaks.reserved * (1 + reserved)],
      peakAllocated: [peaks.allocated * Math.max(0, 1 - allocatedBelow), peaks.allocated * (1 + allocated)],
      librarySized: chosen,
      librarySizedBelow: chosenBelow,
      cudnnWorkspaces: workspaces,
      fragmentation,
      sources,
      unmeasured,
    };
  }
}

/** The band on peak reserved at a size, above and below the predicted peak (relative), per config, each
 * config's measurements made once. */
export function bandOfPredictor(predictor: SizePredictor): (size: number, config: AllocatorConfig, known?: { prediction: Prediction; peaks: Peaks }) => BandWidths {
  const meters = new Map<string, BandMeter>();
  return (size, config, known) => {
    const key = configToString(config);
    let meter = meters.get(key);
    if (!meter) meters.set(key, (meter = new BandMeter(predictor, config)));
    // A caller that has the prediction at `size` and its uncapped peaks already passes them (no second replay).
    const p = known?.prediction ?? predictor.at(size);
    const band = meter.bandAt(p, known?.peaks ?? peaksOf(p.stream, config));
    return { above: band.reserved, below: band.reservedBelow };
  };
}

/** A band's half-widths on one figure, relative: how much higher the real one may be, and how much lower. */
export interface BandWidths {
  above: number;
  below: number;
}

/** How far `chosen`'s allocations, and the cuDNN workspaces, could raise the stream's peak of live requested
 * bytes (its peak allocated) were each up to twice its size: max over time of live bytes plus theirs,
 * less the peak (not their bytes at the peak alone: a larger workspace elsewhere can make the peak there);
 * and how far `chosen`'s could lower it were they gone: the peak less the max of live bytes without theirs. */
function liveAtPeak(stream: RequestStream, chosen: ReadonlySet<number>): [number, number, number] {
  const ws = stream.cudnnWorkspaces;
  if (ws.size === 0 && chosen.size === 0) return [0, 0, 0];
  let live = 0;
  let liveChosen = 0;
  let liveWs = 0;
  let peak = 0;
  let withChosen = 0;
  let withWs = 0;
  let withoutChosen = 0;
  const sizeOf = new Float64Array(stream.idCount);
  for (let i = 0; i < stream.length; i++) {
    const id = stream.id[i]!;
    const sign = stream.kind[i] === RequestKind.alloc ? 1 : stream.kind[i] === RequestKind.free ? -1 : 0;
    if (sign === 0) continue;
    if (sign > 0) sizeOf[id] = stream.size[i]!;
    const b = sign * sizeOf[id]!;
    live += b;
    if (chosen.has(id)) liveChosen += b;
    if (ws.has(id)) liveWs += b;
    if (sign < 0) sizeOf[id] = 0;
    peak = Math.max(peak, live);
    withChosen = Math.max(withChosen, live + liveChosen);
    withWs = Math.max(withWs, live + liveWs);
    withoutChosen = Math.max(withoutChosen, live - liveChosen);
  }
  return [withChosen - peak, withWs - peak, peak - withoutChosen];
}

/** "within ±1.2% (peak reserved 10.1-10.4 GiB)": the band in words; "+31.5%/−16.2%" where it is wider above. */
export function bandPercent(relative: number, below = relative): string {
  const pct = (r: number): string => (r * 100 < 0.1 ? (r * 100).toFixed(2) : (r * 100).toFixed(1));
  return pct(below) === pct(relative) ? `±${pct(relative)}%` : `+${pct(relative)}%/−${pct(below)}%`;
}
