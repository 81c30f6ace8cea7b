// One recording in brief, for setting beside others (two runs compared, the ranks of one job): its
// peaks, OOMs and fragmentation as replayed under its recorded config (the figures `splitscope
// replay` prints), the same under another config asked for (a what-if), its timeline thinned to a
// few thousand points, and which code held the memory when allocated memory peaked.
import { parseAllocConf } from '../../allocator/config-parser';
import { configToString, sameDecisions } from '../../allocator/config';
import { allocationStacks } from '../measures/allocation-stacks';
import { memoryByStack, type AllocationSite } from '../measures/memory-by-stack';
import { memoryLayout } from '../measures/memory-layout';
import type { Snapshot } from '../snapshot/snapshot';
import type { TraceColumns } from '../snapshot/trace-columns';
import { replaySnapshot } from './replay-snapshot';
import { firstMaxIndex } from '../../lib/first-max';
import type { RequestStream } from '../stream/request-stream';
import { envelope } from '../../lib/envelope';
import { coverageOf, type Coverage } from './coverage';

export interface RunFigures {
  conf: string;
  peakReserved: number;
  peakAllocated: number;
  ooms: number;
  /** Request index of the first OOM, -1 if none. */
  firstOom: number;
  /** At the reserved peak: reserved less allocated, and the share of the free bytes outside the largest free block. */
  gapAtPeak: number;
  fragmentationAtPeak: number;
  deviceAllocs: number;
  deviceFrees: number;
}

export interface RecordingDigest {
  name: string;
  requests: number;
  /** As recorded (its config, the cap its OOMs show). */
  recorded: RunFigures;
  /** Under the config asked for, when it makes other decisions than the recorded one. */
  whatIf: RunFigures | null;
  /** Allocated and reserved bytes, at most POINTS points each: the largest value of each stretch of requests. */
  allocated: Float64Array;
  reserved: Float64Array;
  /** The allocation sites live at the allocated peak (recorded config). */
  sitesAtPeak: AllocationSite[];
  /** How much of the program the recording covers (what a what-if's verdict may say). */
  coverage: Coverage;
}

const POINTS = 2000;

/** The recording's trace as columns, and its request stream when already built (a stream serves every config). */
export interface DigestSource {
  trace?: TraceColumns;
  stream?: RequestStream;
}

/** `seriesToo`: keep the per-request series (the recorded run's timeline); no replay here keeps its events. */
function figures(snapshot: Snapshot, from: DigestSource, conf: string | undefined, seriesToo: boolean) {
  const run = replaySnapshot(snapshot, {
    ...(from.trace ? { trace: from.trace } : {}),
    ...(from.stream ? { stream: from.stream } : {}),
    ...(conf !== undefined ? { conf } : {}),
    ...(seriesToo ? { keepEvents: false } : { statsOnly: true }),
  });
  const { result } = run;
  const stats = result.stats;
  const peak = result.atPeak;
  const free = peak.reserved - peak.allocated;
  const f: RunFigures = {
    conf: configToString(run.config),
    peakReserved: stats['reserved_bytes.all.peak']!,
    peakAllocated: stats['allocated_bytes.all.peak']!,
    ooms: result.ooms.length,
    firstOom: result.ooms[0]?.request ?? -1,
    gapAtPeak: free,
    fragmentationAtPeak: free > 0 ? 1 - peak.largestFreeBlock / free : 0,
    deviceAllocs: stats['num_device_alloc']!,
    deviceFrees: stats['num_device_free']!,
  };
  return { run, figures: f };
}

/** `conf`: the config a what-if asks for (null: only the recorded one). */
export function recordingDigest(name: string, snapshot: Snapshot, from: DigestSource, conf: string | null): RecordingDigest {
  const { run, figures: recorded } = figures(snapshot, from, undefined, true);
  const source = { ...from, stream: run.stream };
  const whatIf = conf !== null && !sameDecisions(parseAllocConf(conf).config, run.recorded) ? figures(snapshot, source, conf, false).figures : null;
  const allocated = run.result.series.allocated;
  const peakRequest = firstMaxIndex(allocated);
  // Which code held the memory at the allocated peak: the allocator as it was after that request.
  let sitesAtPeak: AllocationSite[] = [];
  if (run.stream.length > 0) {
    const atPeak = replaySnapshot(snapshot, { ...(from.trace ? { trace: from.trace } : {}), stream: run.stream, until: peakRequest, statsOnly: true });
    const stacks = allocationStacks(run.stream, from.trace?.details, snapshot);
    sitesAtPeak = memoryByStack(memoryLayout(atPeak.result.allocator, () => -1), stacks.stackOf).sites;
  }
  return {
    name,
    requests: run.stream.length,
    recorded,
    whatIf,
    allocated: envelope(allocated, POINTS).max,
    reserved: envelope(run.result.series.reserved, POINTS).max,
    sitesAtPeak,
    coverage: coverageOf(run.stream),
  };
}
