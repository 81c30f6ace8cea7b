// splitscope predict SIZE:FILE SIZE:FILE [...] --at SIZE | --fit: the program's run at another size, from
// its recordings at two sizes or more (trace/predict), replayed like any recording: what `replay` prints
// for it, and how well the sizes were fitted; or the largest size whose predicted run fits under a cap.
import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import type { Capacity } from '../allocator/capacity';
import { configToString, sameDecisions, type AllocatorConfig } from '../allocator/config';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { stacksOfKeys } from '../trace/measures/allocation-stacks';
import { layoutNote, verdictUnderLayouts } from '../trace/predict/address-layouts';
import { bandAnswer, cudnnWorkspacesText, edgeText, sizeFits, type RunAt, type SizeFit } from '../trace/predict/size-fit';
import { memoryNeeded, type MemoryNeeded } from '../trace/sweep/memory-needed';
import { SizePredictor, type Prediction, type SizedRecording } from '../trace/predict/predict-stream';
import { BandMeter, bandOfPredictor, bandPercent, type PredictionBand } from '../trace/predict/prediction-band';
import { peakTrend, type PeakTrend } from '../trace/predict/peak-trend';
import { replay, type ReplayResult } from '../trace/replay/replay';
import { replayNotes } from '../trace/replay/replay-snapshot';
import { exportSnapshot } from '../trace/replay/snapshot-export';
import { snapshotBytesFor } from './snapshot-out';
import { recordedConfig } from '../trace/snapshot/recorded-config';
import { capacityOption, noteLine, oomsOf, caughtOomsOf, printReplay, UsageError } from './cli-format';
import type { PlannedRecording } from './recording-worker';
import { checkOutput, writeOutput } from './output-file';
import { coverageOf } from '../trace/replay/coverage';
import { MAX_RECORDABLE_BYTES } from '../trace/snapshot/snapshot';
import { RequestKind } from '../trace/stream/request-stream';

export interface PredictOptions {
  at?: string;
  fit?: boolean;
  /** One for --at; for --fit, each config to find the largest size under (side by side). */
  conf?: string[];
  capacity?: string;
  json?: boolean;
  out?: string;
  /** Replace --out if it exists. */
  force?: boolean;
}

/** The largest size --fit tries, as a multiple of the largest recorded. */
const FIT_LIMIT = 64;

/** "8:run_b8.pickle.gz" -> 8 and the file. */
function sizedFile(arg: string): { size: number; file: string } {
  const at = arg.indexOf(':');
  const size = Number(arg.slice(0, at));
  if (at <= 0 || !/^\d+(\.\d+)?$/.test(arg.slice(0, at)) || !(size > 0)) {
    throw new UsageError(`predict takes recordings as SIZE:FILE (e.g. 8:run_batch8.pickle.gz, the size being the batch or sequence length it ran at), not '${arg}'`);
  }
  return { size, file: arg.slice(at + 1) };
}

/** The recordings named, decoded (in order). */
export type LoadRecordings = (files: readonly string[]) => Promise<PlannedRecording[]>;

export async function predictCommand(positionals: readonly string[], options: PredictOptions, load: LoadRecordings): Promise<number> {
  const answer = await predictAnswer(positionals.map(sizedFile), options, load);
  if (options.json) {
    if (answer.kind === 'at') for (const note of answer.notes) console.error(noteLine(note));
    console.log(JSON.stringify(answer.json));
    return 0;
  }
  if (answer.kind === 'fit') {
    console.log(`largest size that fits under ${formatSize(answer.capacity)}:`);
    const width = Math.max(...answer.fits.map((f) => (f.conf || '(defaults)').length));
    for (const f of answer.fits) {
      const what =
        f.largest === null
          ? 'none: even size 1 runs out of memory'
          : `${grouped(f.largest)}${bandAnswer(f, answer.capacity)}` + (f.firstFailing !== null ? edgeText(f, answer.capacity) : ` (and every size up to ${FIT_LIMIT}x the largest recorded)`);
      console.log(`  ${(f.conf || '(defaults)').padEnd(width)}  ${what}`);
    }
    for (const f of answer.fits) console.log(`tried under ${f.conf || '(defaults)'}: ${f.tried.map((t) => `${grouped(t.size)} ${t.fits ? 'fits' : 'OOM'}`).join(', ')}`);
    return 0;
  }
  printPrediction(answer.prediction, answer.config, answer.capacity);
  console.log(`error:     ${bandText(answer.band)}`);
  const t = answer.trend;
  console.log(
    `trend:     the recordings' own peaks give ${formatSize(t.reserved)} reserved, ${formatSize(t.allocated)} allocated here (the prediction ${t.reservedOff >= 0 ? '+' : ''}${(t.reservedOff * 100).toFixed(1)}%, ${t.allocatedOff >= 0 ? '+' : ''}${(t.allocatedOff * 100).toFixed(1)}%); ` +
      `trusting ${t.trusted === 'trend' ? 'the recordings\' line' : 'the request-level prediction'}: ${t.why}`,
  );
  printReplay(answer.result, answer.notes);
  printNeeded(answer.needed);
  if (options.out) console.log(`wrote ${options.out}`);
  return 0;
}

/** What predict answers, printed by the command and returned by the MCP server's `predict` tool. */
export type PredictAnswer =
  | { kind: 'fit'; capacity: number; fits: SizeFit[]; json: object }
  | { kind: 'at'; prediction: Prediction; band: PredictionBand; trend: PeakTrend; result: ReplayResult; notes: string[]; needed: MemoryNeeded; config: AllocatorConfig; capacity: Capacity | null; json: object };

/** The program at `options.at`, or the largest size that fits (`options.fit`), from `inputs` (nothing printed). */
export async function predictAnswer(
  inputs: readonly { size: number; file: string }[],
  options: PredictOptions,
  load: LoadRecordings,
): Promise<PredictAnswer> {
  if (inputs.length < 2) throw new UsageError('predict needs recordings of the program at two sizes or more: SIZE:FILE SIZE:FILE [...]');
  if (options.fit === (options.at !== undefined)) throw new UsageError('predict takes either --at SIZE (the run at that size) or --fit --capacity SIZE (the largest size that fits)');
  const capacity = capacityOption(options.capacity) ?? null;
  if (options.fit && !capacity) throw new UsageError('--fit needs --capacity: the memory the run must fit in (e.g. 80GB, or the H200: 150109880320)');
  const target = options.at !== undefined ? Number(options.at) : NaN;
  if (options.at !== undefined && !(target > 0 && Number.isFinite(target))) throw new UsageError(`--at takes a size above 0, not '${options.at}'`);
  distinctRecordings(inputs);
  const output = options.out !== undefined ? { overwrite: options.force ?? false, inputs: inputs.map((i) => i.file) } : null;
  if (output) checkOutput(options.out!, output);

  const planned = await load(inputs.map((i) => i.file));
  const recorded = oneConfig(inputs, planned);
  finishedRuns(inputs, planned);
  const recordings: SizedRecording[] = inputs.map(({ size, file }, k) => ({ name: basename(file), size, stream: planned[k]!.stream, stacks: stacksOfKeys(planned[k]!.stacks) }));
  const predictor = new SizePredictor(recordings);
  if (!options.fit && (options.conf?.length ?? 0) > 1) throw new UsageError('predict --at takes one --conf (several only with --fit)');
  // The recordings' own config (the first one's), unless others are asked for; --fit sets it beside
  // expandable_segments:True, the setting most worth trying.
  const configs = options.conf?.length
    ? options.conf.map((c) => parseAllocConf(c).config)
    : options.fit && !recorded.expandableSegments
      ? [recorded, { ...recorded, expandableSegments: true }]
      : [recorded];
  const config = configs[0]!;

  if (options.fit) {
    const start = Math.round(Math.max(...predictor.sizes));
    const runAt: RunAt = (size, c) => {
      const { stream, layouts } = predictor.at(size);
      return { stream, options: { config: c, addresses: 'simulated' }, layouts };
    };
    const fits = sizeFits(runAt, configs, capacity!, start, start * FIT_LIMIT, bandOfPredictor(predictor));
    const best = fits.reduce((a, b) => ((b.largest ?? 0) > (a.largest ?? 0) ? b : a));
    const row = (f: SizeFit) => ({
      largest: f.largest,
      first_failing: f.firstFailing,
      first_failing_needs: f.firstFailingNeeds,
      first_failing_fits_without_cudnn_workspaces: f.firstFailingFitsWithoutWorkspaces,
      largest_split: f.largestSplit,
      first_failing_split: f.firstFailingSplit,
      largest_band: f.largestBand,
      largest_band_below: f.largestBandBelow,
      largest_within_band: f.largestWithin,
      band_range: f.bandRange,
      first_failing_band: f.firstFailingBand,
      first_failing_band_below: f.firstFailingBandBelow,
      answer: f.largest === null ? null : `${f.largest}${bandAnswer(f, capacity!.bytes)}`,
      conf: f.conf,
      tried: f.tried,
    });
    return { kind: 'fit', capacity: capacity!.bytes, fits, json: { fit: { ...row(best), capacity: capacity!.bytes, by_conf: fits.map(row) } } };
  }

  const prediction = predictor.at(target);
  deviceSized(prediction, options.at!);
  const keepEvents = options.out !== undefined;
  const result = replay(prediction.stream, { config, addresses: 'simulated', ...(capacity ? { capacity } : {}), ...(keepEvents ? { keepEvents: true } : { statsOnly: true }) });
  if (options.out) writeOutput(options.out, snapshotBytesFor(options.out, exportSnapshot(result, prediction.stream, { config, device: 0 })), output!);
  // Under a cap, the run is judged under the recordings' address layouts too: where they split, a note says so.
  const layouts = capacity ? verdictUnderLayouts(prediction.stream, { config, addresses: 'simulated' }, capacity, prediction.layouts, { all: true, driver: result }) : null;
  const layoutSplit = layouts ? layoutNote(layouts) : null;
  const notes = [...prediction.stream.notes, ...replayNotes(result), ...(layoutSplit ? [layoutSplit] : [])];
  const needed = memoryNeeded(prediction.stream, config, capacity ? undefined : result.stats);
  const meter = new BandMeter(predictor, config);
  const peaks = { reserved: needed.peakReserved, allocated: needed.peakAllocated };
  const band = meter.bandAt(prediction, peaks);
  const trend = peakTrend(meter.recordedPeaks(), target, peaks, band.reserved, prediction.extrapolation);
  if (trend.trusted === 'trend') {
    notes.push(
      `The recordings' own peaks put size ${grouped(target)} at ${formatSize(trend.reserved)} reserved and ${formatSize(trend.allocated)} allocated, ` +
        `where the predicted run peaks at ${formatSize(peaks.reserved)} and ${formatSize(peaks.allocated)}: trusting the recordings' line for the peaks, since ${trend.why}.`,
    );
  }
  const need = {
    peak_reserved: needed.peakReserved,
    peak_allocated: needed.peakAllocated,
    cards: needed.cards.map((c) => ({ name: c.name, bytes: c.bytes, fits: c.fits, below_peak_allocated: c.belowAllocated, first_oom_request: c.firstOom })),
  };
  const quality = {
    target,
    skeleton: prediction.skeleton,
    aligned: prediction.aligned,
    laws: prediction.laws,
    unclean_sites: prediction.uncleanSites.slice(0, 20),
    extrapolation: prediction.extrapolation,
    cudnn_workspaces: prediction.cudnnWorkspaces,
    band: bandJson(band),
    trend: {
      peak_reserved: trend.reserved,
      peak_allocated: trend.allocated,
      residual: trend.residual,
      reserved_off: trend.reservedOff,
      allocated_off: trend.allocatedOff,
      trusted: trend.trusted,
      why: trend.why,
    },
  };
  return { kind: 'at', prediction, band, trend, result, notes, needed, config, capacity, json: { stats: result.stats, ooms: oomsOf(result), caught_ooms: caughtOomsOf(result), address_layouts: layouts, prediction: quality, needs: need } };
}

/** prediction.band in --json: half-widths relative to the uncapped peaks (above them, and below), their
 * ranges in bytes, and each measurement. */
export function bandJson(b: PredictionBand): object {
  return {
    reserved: b.reserved,
    allocated: b.allocated,
    reserved_below: b.reservedBelow,
    allocated_below: b.allocatedBelow,
    peak_reserved: b.peakReserved,
    peak_allocated: b.peakAllocated,
    library_sized: b.librarySized,
    library_sized_below: b.librarySizedBelow,
    cudnn_workspaces: b.cudnnWorkspaces,
    fragmentation: b.fragmentation,
    sources: b.sources,
    unmeasured: b.unmeasured || null,
  };
}

/** The band in a line: "peak reserved 10.1-10.4 GiB (±1.2%), peak allocated ...; measured ...". */
export function bandText(b: PredictionBand): string {
  const range = ([lo, hi]: [number, number]) => `${formatSize(lo)} to ${formatSize(hi)}`;
  const measured = b.sources.length
    ? `from ${b.sources.filter((s) => s.kind === 'skeleton').length} recordings predicted from the skeleton's requests` +
      (b.sources.some((s) => s.kind === 'laws') ? ` and ${b.sources.filter((s) => s.kind === 'laws').length} from the others alone` : '')
    : 'nothing measured';
  const cudnn = b.cudnnWorkspaces > 0 ? `, cuDNN's workspaces ${bandPercent(b.cudnnWorkspaces)}` : '';
  const library =
    b.librarySized > 0 ? `; allocations whose size a library picks or one recording alone has: ${bandPercent(b.librarySized)} of it${cudnn}` : '';
  return `peak reserved ${range(b.peakReserved)} (${bandPercent(b.reserved, b.reservedBelow)}), peak allocated ${range(b.peakAllocated)} (${bandPercent(b.allocated, b.allocatedBelow)}); measured ${measured}${library}` + (b.unmeasured ? `; ${b.unmeasured}` : '');
}

/** A predicted run that asks for more in one request than any GPU holds (a size far past the recordings)
 * is refused, not replayed: no device could run it, and its segments would only cost time and memory. */
function deviceSized(p: Prediction, at: string): void {
  const { stream } = p;
  let largest = 0;
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && stream.size[i]! > largest) largest = stream.size[i]!;
  if (largest > MAX_RECORDABLE_BYTES) {
    throw new UsageError(
      `at size ${at} the program would ask for ${formatSize(largest)} in one request, more than any GPU holds (${formatSize(MAX_RECORDABLE_BYTES)}): predict a size nearer its recordings (${p.skeleton.name} ran at ${grouped(p.skeleton.size)})`,
    );
  }
}

/** One recording per size, each file once: the same file twice, or two at one size, fits nothing. */
function distinctRecordings(inputs: readonly { size: number; file: string }[]): void {
  const where = (file: string): string => {
    try {
      return realpathSync(file);
    } catch {
      return file; // named when it is read
    }
  };
  inputs.forEach((a, i) =>
    inputs.slice(0, i).forEach((b) => {
      if (where(a.file) === where(b.file)) throw new UsageError(`predict was given one file twice (${b.size}:${b.file} and ${a.size}:${a.file}): it needs recordings at two sizes or more`);
      if (a.size === b.size) throw new UsageError(`predict was given two recordings at size ${a.size} (${b.file} and ${a.file}): it needs recordings at two sizes or more`);
    }),
  );
}

/** The recordings' one config: recordings made under different ones are refused, each config said. */
function oneConfig(inputs: readonly { size: number; file: string }[], planned: readonly PlannedRecording[]): AllocatorConfig {
  const configs = planned.map((p) => recordedConfig(p.settings).config);
  if (configs.every((c) => sameDecisions(c, configs[0]!))) return configs[0]!;
  const each = inputs.map((r, k) => `${r.file} under ${configToString(configs[k]!) || '(defaults)'}`).join(', ');
  throw new UsageError(`predict's recordings were made under different PYTORCH_CUDA_ALLOC_CONF settings (${each}): record every size under one config (--conf then predicts under any other)`);
}

/** A recording that ends at its OOM lacks the rest of its run: named, not aligned as if it were whole. */
function finishedRuns(inputs: readonly { size: number; file: string }[], planned: readonly PlannedRecording[]): void {
  planned.forEach((p, k) => {
    const oom = coverageOf(p.stream).endsAtOom;
    if (oom !== null) {
      throw new UsageError(
        `${inputs[k]!.file} ends at its OOM at request ${grouped(oom)}: the rest of that run was never recorded. Record a run that finishes (a smaller size, or without the memory cap), or leave this size out`,
      );
    }
  });
}

/** How the prediction was made and how far to trust it: never more precision than the fit has. */
function printPrediction(p: Prediction, config: AllocatorConfig, capacity: Capacity | null): void {
  const { laws } = p;
  console.log(`predicted: size ${grouped(p.target)}, the requests of ${p.skeleton.name} (size ${grouped(p.skeleton.size)})`);
  for (const a of p.aligned) console.log(`aligned:   ${(a.share * 100).toFixed(1)}% of the allocations with ${a.name} (size ${grouped(a.size)})`);
  console.log(
    `sizes:     ${grouped(laws.constant)} constant, ${grouped(laws.linear)} linear, ${grouped(laws.quadratic)} quadratic in the size; ` +
      `${grouped(laws.unclean)} follow no clean law (taken between the nearest recordings), ${grouped(laws.unaligned)} aligned in no other recording (kept as recorded)`,
  );
  for (const s of p.uncleanSites.slice(0, 5)) console.log(`  not clean: ${s.site} (${grouped(s.allocations)} allocations)`);
  if (p.cudnnWorkspaces > 0) console.log(`cuDNN:     ${cudnnWorkspacesText(p.cudnnWorkspaces)}`);
  if (p.extrapolation !== null) console.log(`extrapolated: ${p.extrapolation.toFixed(2)}x beyond the recorded sizes`);
  console.log(`config:    ${configToString(config) || '(defaults)'}`);
  console.log(`capacity:  ${capacity ? `${formatSize(capacity.bytes)} (memory fraction cap)` : 'none'}`);
  console.log(`addresses: simulated`);
  console.log(`requests:  ${p.stream.length}`);
}

/** Which card the predicted run needs: its peak reserved, and each usual card as the cap, replayed. */
function printNeeded(n: MemoryNeeded): void {
  console.log(`\nneeds: ${formatSize(n.peakReserved)} reserved at the peak without a cap (${formatSize(n.peakAllocated)} allocated); under each card's memory as the cap:`);
  for (const c of n.cards) {
    const what = c.fits ? 'fits' : c.belowAllocated ? 'OOM (less than the peak allocated)' : `OOM at request ${grouped(c.firstOom!)}`;
    console.log(`  ${c.name.padEnd(11)} ${formatSize(c.bytes).padStart(11)}  ${what}`);
  }
}
