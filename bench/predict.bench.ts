// Size prediction on a 45 MB-class pair, end to end in the CLI (process start to exit): `predict --at`
// and `predict --fit`. The pair is train_gpt2-n150 (45 MB of pickle) and the same run at "twice the
// size": every allocation the step frees again (activations, temporaries) asks for twice the bytes,
// and every 400th such allocation is left out, so the alignment has gaps to bridge as a real pair's
// library choices make. Written once to bench/out/predict-pair/ through the snapshot exporter.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { gunzipSync, gzipSync } from 'node:zlib';
import { MiB } from '../src/allocator/constants';
import { nodeGunzip } from '../src/cli/node-gunzip';
import { replay } from '../src/trace/replay/replay';
import { planSnapshotReplay } from '../src/trace/replay/replay-snapshot';
import { exportSnapshot } from '../src/trace/replay/snapshot-export';
import { decodeSnapshotForReplay, encodeSnapshotFile } from '../src/trace/snapshot/snapshot-file';
import { RequestKind, type RequestStream } from '../src/trace/stream/request-stream';
import { editStream } from '../src/trace/stream/stream-edit';
import { fixture, median, report, ROOT } from './harness';
import { formatSize } from '../src/allocator/format-size';
import { accuracyRows, capRows, fitRows, pairSizes, PROGRAMS } from '../tests/unit/size-recordings';
import { parseAllocConf } from '../src/allocator/config-parser';
import { SizePredictor } from '../src/trace/predict/predict-stream';
import { BandMeter, peaksOf } from '../src/trace/predict/prediction-band';
import { FRAMEWORK_MODES, frameworkCapRows, frameworkFits, frameworkPrograms, frameworkRecordings } from '../tests/unit/framework-recordings';

const SOURCE = 'train_gpt2-n150__default.pickle.gz';
const DIR = join(ROOT, 'bench/out/predict-pair');

/** The source's requests at "twice the size", with every 400th freed allocation left out. */
function doubled(s: RequestStream): RequestStream {
  const freed = new Set<number>();
  for (let i = 0; i < s.length; i++) if (s.kind[i] === RequestKind.free) freed.add(s.id[i]!);
  const dropped = new Set<number>();
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.kind[i] === RequestKind.alloc && freed.has(s.id[i]!) && ++n % 400 === 0) dropped.add(s.id[i]!);
  const drop = new Set<number>();
  for (let i = 0; i < s.length; i++) if (dropped.has(s.id[i]!)) drop.add(i);
  const { stream } = editStream(s, { drop, resize: (i, size) => (freed.has(s.id[i]!) && size >= MiB ? 2 * size : size) });
  return { ...stream, recordedOoms: new Int32Array(0), recordedSegments: [], recordedMappings: [] };
}

function writePair(): [string, string] {
  const files: [string, string] = [fixture(SOURCE), join(DIR, 'gpt2_b2.pickle.gz')];
  if (existsSync(files[1])) return files;
  mkdirSync(DIR, { recursive: true });
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(fixture(SOURCE)), { gunzip: nodeGunzip, details: true });
  const { stream, replayOptions: options } = planSnapshotReplay(snapshot, { trace: traces[0]! });
  const twice = doubled(stream);
  const run = replay(twice, { ...options, addresses: 'simulated', keepEvents: true });
  writeFileSync(files[1], gzipSync(encodeSnapshotFile(exportSnapshot(run, twice, { config: options.config, sourceDetails: traces[0]!.details! }), 'pickle')));
  return files;
}

function seconds(args: string[], runs: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/splitscope.mjs'), ...args], { encoding: 'utf8' });
    out.push((performance.now() - t0) / 1e3);
    if (r.status !== 0) throw new Error(`splitscope ${args.join(' ')} failed: ${r.stderr}`);
  }
  return out;
}

const worst = (xs: number[]): number => Math.max(0, ...xs.map(Math.abs));
const pct = (x: number): string => `${x.toFixed(2)}%`;

/** The recorded programs (tests/fixtures/sizes), each predicted from two sizes, against the real runs at the others. */
async function accuracy(): Promise<Record<string, string>> {
  const rows = accuracyRows();
  const caps = capRows();
  const fits = await fitRows();
  const out: Record<string, string> = {};
  for (const program of PROGRAMS) {
    const of = rows.filter((r) => r.program === program);
    const inside = of.filter((r) => r.beyond === 1);
    const outside = of.filter((r) => r.beyond > 1);
    const [a, b] = pairSizes(program);
    out[`${program} from ${a} and ${b}: peak reserved inside / up to 2x beyond, peak allocated, cudaMalloc count (worst |error| over ${of.length} runs)`] = [
      worst(inside.map((r) => r.error[0])),
      worst(outside.map((r) => r.error[0])),
      worst(of.map((r) => r.error[1])),
      worst(of.map((r) => r.error[2])),
    ]
      .map(pct)
      .join(' / ');
  }
  const all = (k: number, where: (r: (typeof rows)[number]) => boolean) => worst(rows.filter(where).map((r) => r.error[k]!));
  const sameVerdict = caps.filter((c) => (c.real === null) === (c.predicted === null));
  const firstOomOff = worst(caps.filter((c) => c.real !== null && c.predicted !== null).map((c) => ((c.predicted! - c.real!) / c.requests) * 100));
  out['goal: peak reserved within 3% inside the recorded sizes'] = all(0, (r) => r.beyond === 1) <= 3 ? 'met' : 'NOT met';
  out['goal: peak reserved within 5% up to 2x beyond them'] = all(0, (r) => r.beyond > 1) <= 5 ? 'met' : 'NOT met';
  out['goal: peak allocated within 1%'] = all(1, () => true) <= 1 ? 'met' : `NOT met (${rows.filter((r) => Math.abs(r.error[1]) > 1).map((r) => `${r.program} at ${r.size} under ${r.conf || 'the defaults'}`).join(', ')})`;
  out['goal: cudaMalloc count within 5%'] = all(2, () => true) <= 5 ? 'met' : 'NOT met';
  out[`under a cap: the real run's OOM verdict (${caps.length} runs)`] = `${sameVerdict.length} of ${caps.length}${sameVerdict.length === caps.length ? ', met' : ', NOT met'}`;
  out["under a cap: first OOM's request, worst offset in % of the run's requests (goal 1%)"] = `${pct(firstOomOff)}${firstOomOff <= 1 ? ', met' : ', NOT met'}`;
  const under = (f: (typeof fits)[number]) => `${f.program} ${f.conf || 'defaults'} under ${formatSize(f.cap)}`;
  out['predict --fit against the largest size the program ran at (program, config, cap: predicted / real)'] = fits.map((f) => `${under(f)}: ${f.predicted} / ${f.real}`).join('; ');
  out['--fit answers resting on the address layouts (fits at most layouts, not at the driver model\'s)'] = fits.filter((f) => f.largestSplit).map(under).join('; ') || 'none';
  const cudnn = (f: (typeof fits)[number]) => (f.firstFailing === f.real && f.firstFailingFitsWithoutWorkspaces ? ` (${f.real} fits with its cuDNN workspaces left out, as --fit says)` : '');
  const same = fits.filter((f) => f.predicted === f.real).length;
  out['goal: --fit equals the real largest'] = `${same} of ${fits.length}` + (same === fits.length ? ', met' : `, NOT met for ${fits.filter((f) => f.predicted !== f.real).map((f) => `${under(f)}${cudnn(f)}`).join(', ')}`);
  return out;
}

/** The held-out framework programs (tests/fixtures/frameworks), each recording mode, predicted from the
 * 2nd and 4th sizes at the 1st, 3rd, 5th and 6th: worst errors beside issue 45's goals, and whether the
 * stated error band held the real peaks. */
function heldOut(): Record<string, string> {
  const defaults = parseAllocConf('').config;
  const out: Record<string, string> = {};
  let inside = 0;
  let beyond = 0;
  let allocated = 0;
  let mallocs = 0;
  let held = 0;
  let total = 0;
  const mallocCount = (stream: RequestStream): number => replay(stream, { config: defaults, addresses: 'simulated', statsOnly: true }).stats['num_device_alloc']!;
  for (const program of frameworkPrograms(ROOT)) {
    for (const mode of FRAMEWORK_MODES) {
      const all = frameworkRecordings(program, mode, ROOT);
      const of = all;
      const predictor = new SizePredictor([all[1]!, all[3]!]);
      const meter = new BandMeter(predictor, defaults);
      const cells: string[] = [];
      for (const k of [0, 2, 4, 5]) {
        const p = predictor.at(of[k]!.size);
        const peaks = peaksOf(p.stream, defaults);
        const band = meter.bandAt(p, peaks);
        const real = peaksOf(all[k]!.stream, defaults);
        const er = (peaks.reserved / real.reserved - 1) * 100;
        const ea = (peaks.allocated / real.allocated - 1) * 100;
        const em = (mallocCount(p.stream) / mallocCount(all[k]!.stream) - 1) * 100;
        mallocs = Math.max(mallocs, Math.abs(em));
        const ok = real.reserved >= band.peakReserved[0] && real.reserved <= band.peakReserved[1] && real.allocated >= band.peakAllocated[0] && real.allocated <= band.peakAllocated[1];
        if (k === 2) inside = Math.max(inside, Math.abs(er));
        else beyond = Math.max(beyond, Math.abs(er));
        allocated = Math.max(allocated, Math.abs(ea));
        held += ok ? 1 : 0;
        total++;
        cells.push(`${of[k]!.size}: ${er.toFixed(1)}% / ${ea.toFixed(1)}% / ${em.toFixed(1)}% (band ±${(band.reserved * 100).toFixed(1)}%${ok ? '' : ', missed'})`);
      }
      out[`${program}, ${mode} mode, from ${of[1]!.size} and ${of[3]!.size}: peak reserved / allocated / cudaMalloc count error`] = cells.join('; ');
    }
  }
  out['goal: peak reserved within 3% inside the recorded sizes'] = `${inside.toFixed(1)}%${inside <= 3 ? ', met' : ', NOT met'}`;
  out['goal: peak reserved within 5% up to 2x beyond them'] = `${beyond.toFixed(1)}%${beyond <= 5 ? ', met' : ', NOT met'}`;
  out['goal: peak allocated within 1%'] = `${allocated.toFixed(1)}%${allocated <= 1 ? ', met' : ', NOT met'}`;
  out['goal: cudaMalloc count within 5%'] = `${mallocs.toFixed(1)}%${mallocs <= 5 ? ', met' : ', NOT met'}`;
  out['the error band held the real peaks'] = `${held} of ${total}${held === total ? '' : ', NOT always'}`;
  return out;
}

/** --fit on the held-out programs under their phase-2 caps (run on an H100; the recordings on an H200):
 * the answer beside the real largest size, and whether the real one lies among the sizes the band names. */
async function heldOutFits(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  let inside = 0;
  const fits = await frameworkFits(ROOT);
  for (const f of fits) {
    const [lo, hi] = f.range;
    const ok = lo <= (f.realFails ?? Infinity) - 1 && hi >= f.real;
    inside += ok ? 1 : 0;
    const real = f.realFails === null ? `${f.real} or more (every size tried fit)` : f.realFails === f.real + 1 ? `${f.real}` : `${f.real} to ${f.realFails - 1}`;
    out[`${f.program}, ${f.mode} mode, under ${formatSize(f.cap)}: --fit / real`] = `${f.answer} / ${real}${ok ? '' : ', NOT inside'}`;
  }
  out['goal: --fit exact or the real answer inside its stated band'] = `${inside} of ${fits.length}${inside === fits.length ? ', met' : ', NOT met'}`;
  const caps = frameworkCapRows(ROOT);
  const same = caps.filter((c) => (c.real === null) === (c.predicted === null));
  const off = caps.filter((c) => c.real !== null && c.predicted !== null).map((c) => ({ c, pct: ((c.predicted! - c.real!) / c.requests) * 100 }));
  const worst = off.reduce((a, b) => (Math.abs(b.pct) > Math.abs(a.pct) ? b : a), off[0]!);
  out[`under the cap: the real run's OOM verdict (${caps.length} runs)`] =
    `${same.length} of ${caps.length}${same.length === caps.length ? ', met' : `, NOT met (${caps.filter((c) => !same.includes(c)).map((c) => `${c.program} ${c.mode} at ${c.size}`).join(', ')})`}`;
  out["under the cap: first OOM's request, worst offset in % of the run's requests (goal 1%)"] =
    `${worst.pct.toFixed(2)}% (${worst.c.program} ${worst.c.mode} at ${worst.c.size}); within 1% in ${off.filter((o) => Math.abs(o.pct) <= 1).length} of ${off.length}${off.every((o) => Math.abs(o.pct) <= 1) ? ', met' : ', NOT met'}`;
  return out;
}

export async function benchPredict(): Promise<void> {
  report('Size prediction accuracy: real programs recorded at six sizes under three configs and a cap (tests/fixtures/sizes)', await accuracy());
  report('Size prediction on held-out framework programs (tests/fixtures/frameworks), both recording modes', heldOut());
  report('predict --fit and the verdict under a cap on the held-out framework programs, from their 2nd and 4th sizes', await heldOutFits());
  const [a, b] = writePair();
  const mb = (f: string): string => (gunzipSync(readFileSync(f)).length / 1e6).toFixed(0);
  const at = seconds(['predict', `1:${a}`, `2:${b}`, '--at', '3', '--json'], 5);
  const fit = seconds(['predict', `1:${a}`, `2:${b}`, '--fit', '--capacity', '80GiB', '--conf', '', '--json'], 3);
  const fit2 = seconds(['predict', `1:${a}`, `2:${b}`, '--fit', '--capacity', '80GiB', '--json'], 3);
  const line = (xs: number[]): string => `${median(xs).toFixed(2)} (${xs.map((x) => x.toFixed(2)).join(' ')})`;
  report(`Size prediction, end to end in the CLI, on a ${mb(a)} MB + ${mb(b)} MB pair (train_gpt2-n150 and it doubled)`, {
    'predict --at 3, median of 5 (s)': line(at),
    'predict --fit --capacity 80GiB, one config, median of 3 (s)': line(fit),
    'predict --fit --capacity 80GiB, defaults and expandable_segments, median of 3 (s)': line(fit2),
    'goal: --at under 2 s': median(at) < 2 ? 'met' : 'NOT met',
    'goal: --fit under 5 s (one config)': median(fit) < 5 ? 'met' : 'NOT met',
  });
}
