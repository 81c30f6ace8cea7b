// splitscope replay|sweep|stats: the allocator model over a PyTorch memory snapshot, from the shell.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Capacity } from '../allocator/capacity';
import { configToString, sameDecisions } from '../allocator/config';
import { ConfigError } from '../allocator/config-error';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { ImportError } from '../lib/import-error';
import { fragmentation } from '../trace/measures/fragmentation';
import { freeBlocksBySize, segmentsByPool, segmentSummary } from '../trace/measures/segment-summary';
import { NO_HISTORY, replaySnapshot } from '../trace/replay/replay-snapshot';
import type { AddressModel } from '../trace/replay/replay';
import { coverageCaveat, coverageOf } from '../trace/replay/coverage';
import type { RequestStream } from '../trace/stream/request-stream';
import { exportSnapshot } from '../trace/replay/snapshot-export';
import { decodeSnapshotForReplay, encodeSnapshotFile, type SnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { decodeSnapshotStream } from '../trace/snapshot/snapshot-stream';
import { PARAM_VALUES, parseMaxSplitList, parseParamValues, sweepMaxSplit, sweepParam, type SweepRow } from '../trace/sweep/sweep';
import { COMMANDS, OPTIONS } from './cli-options';
import { capacityOption, categoriesJson, noteLine, oomsOf, caughtOomsOf, printReplay, statsTable, UsageError } from './cli-format';
import { categorySentence } from '../trace/categories/categories';
import { predictCommand } from './predict';
import { decodeSideBySide, recordingWorker } from './recording-worker';
import { readBytes } from './read-file';
import { writeReport } from './report';
import { explainCommand } from './explain';
import { checkCommand } from './check';
import { batchCommand, batchSummaryCommand, batchWorker } from './batch';
import { workerData } from 'node:worker_threads';
import type { EarlyRead } from './early-read';
import { nodeGunzip } from './node-gunzip';
import { serveOpen } from './open-server';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const USAGE = `usage:
  splitscope replay FILE [--conf STRING] [--capacity SIZE] [--addresses recorded|simulated]
                         [--device N] [--empty-cache-at N,...] [--reset-peak-at N,...] [--until N] [--out OUT.json|OUT.pickle] [--json]
  splitscope sweep FILE --max-split 20,64,128,...,none [--capacity SIZE] [--json]
  splitscope sweep FILE --param roundup_power2_divisions|garbage_collection_threshold --values V,...
                        [--conf STRING] [--capacity SIZE] [--json]
  splitscope report FILE [-o OUT.html] [--conf STRING]
                        writes one self-contained HTML file, the page and the snapshot inside, that
                        opens offline from disk with every view working (for a bug report)
  splitscope open FILE [--port N] [--host ADDRESS]
                        serves the page on loopback with FILE loaded and prints its URL (the file
                        stays on this machine; needs the built page: npm run build)
  splitscope predict SIZE:FILE SIZE:FILE [...] --at SIZE [--conf STRING] [--capacity SIZE] [--out OUT] [--json]
  splitscope predict SIZE:FILE SIZE:FILE [...] --fit --capacity SIZE [--conf STRING]... [--json]
                        the program at another size (a batch, a sequence length) from its recordings at two
                        sizes or more (the same script, a few steps each): its predicted run, replayed, how
                        well the sizes were fitted, and the memory it needs (the smallest cap, which cards);
                        or the largest size whose predicted run fits the cap, under each --conf given
                        (default: the recorded config, and it with expandable_segments:True)
  splitscope explain FILE [--conf STRING] [--capacity SIZE] [--json]
                        the story of the run's OOM (or its peak): what the memory was (parameters,
                        gradients, optimizer state, activations, temporaries, input), what was reserved
                        but unallocated and where, the steps and what grew over them, and the fixes worth
                        trying (settings, empty_cache(), a site freed earlier), each replayed
  splitscope check BASELINE NEW [--max-peak-reserved +5%] [--max-peak-allocated +3%] [--category activation:+10%]...
                        [--no-new-oom] [--conf STRING] [--capacity SIZE] [--json] [--junit FILE] [--markdown FILE]
                        a memory regression gate: the same job before and after a change, replayed under
                        one config and cap, what grew, and exit 1 when a limit is broken (GitHub Actions
                        annotations when GITHUB_ACTIONS is set)
  splitscope batch INPUTS... [--conf STRING]... --out results.jsonl [--workers N] [--shard I/N] [--capacity SIZE]
                        a fleet's snapshots (files or folders) under each config, in worker threads, a JSON
                        row per file and config; resumes where a killed run stopped; --shard for a cluster
  splitscope batch-summary results.jsonl... [--json]
                        which config would have saved how many of the OOMs, and which are not fragmentation
  splitscope mcp        serves the Model Context Protocol on stdin/stdout for agents: the tools summarize,
                        replay, sweep, explain, compare, predict and report, each taking file paths
  splitscope stats FILE [--device N] [--conf STRING] [--capacity SIZE] [--json]
                        the final state: what python -m torch.cuda._memory_viz stats prints, segments
                        by pool and stream, free blocks by size, and the replay's memory_stats()

FILE is a torch.cuda.memory._dump_snapshot pickle (.pickle, .pickle.gz) or the same structure as JSON.
--conf      a whole PYTORCH_CUDA_ALLOC_CONF string replacing the recorded one (default: the recorded config)
--capacity  a memory cap as set_per_process_memory_fraction sets it: bytes, or e.g. 6GiB, 80GB, or none
            (default: the cap a recorded OOM shows, else none)
--addresses where segments land: as recorded, or placed by the driver model
            (default: recorded when the config is the recorded one, else simulated)
--device    which GPU's trace to replay, in a snapshot of several (default: 0)
--empty-cache-at  run torch.cuda.empty_cache() after these request indices
--reset-peak-at   run torch.cuda.reset_peak_memory_stats() after these request indices
--until     stop after this request index (0-based): the stats are those at that moment`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  if (command === 'batch-worker') return batchWorker(workerData);
  if (command === 'recording-worker') return recordingWorker();
  if (!(COMMANDS as readonly string[]).includes(command)) throw new UsageError(`unknown command '${command}'`);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: OPTIONS,
  });
  if (command === 'predict') return predictCommand(positionals, values, (files) => decodeSideBySide(files, (file) => loadForReplay(file, true)));
  if (command === 'batch') return batchCommand(positionals, values);
  if (command === 'batch-summary') return batchSummaryCommand(positionals, values.json ?? false);
  // Loaded only here: the SDK is most of its chunk.
  if (command === 'mcp') return (await import('./mcp')).serveMcp();
  if ((values.conf?.length ?? 0) > 1) throw new UsageError(`${command} takes one --conf (several only with predict --fit and batch)`);
  const conf = values.conf?.[0];
  if (command === 'check') {
    const { conf: _all, ...rest } = values;
    return checkCommand(positionals, { ...rest, ...(conf !== undefined ? { conf } : {}), capacity: capacityOption(values.capacity) }, loadForReplay);
  }
  if (positionals.length !== 1) throw new UsageError(`${command} takes exactly one FILE`);
  const file = positionals[0]!;
  // Absent: the cap a recorded OOM shows (if any); 'none': no cap at all.
  const capacity = capacityOption(values.capacity);
  if (command === 'sweep' && values.param !== undefined) {
    const param = values.param;
    if (param !== 'roundup_power2_divisions' && param !== 'garbage_collection_threshold') {
      throw new UsageError(`--param must be roundup_power2_divisions or garbage_collection_threshold, not '${param}'`);
    }
    if (!values.values) throw new UsageError(`--param needs --values, e.g. --values ${PARAM_VALUES[param].join(',')}`);
    const settings = parseParamValues(param, values.values);
    const { snapshot, traces } = await loadForReplay(file);
    const run = replaySnapshot(snapshot, { statsOnly: true, until: -1, ...(capacity !== undefined ? { capacity } : {}), ...(traces[0] ? { trace: traces[0] } : {}) });
    if (run.stream.length === 0) return nothingToSweep(file);
    const base = conf !== undefined ? parseAllocConf(conf).config : run.recorded;
    const rows = sweepParam(run.stream, base, run.recorded, param, settings, run.capacity);
    console.log(values.json ? JSON.stringify(rows, null, 1) : sweepTable(rows, ['config', (r) => r.conf || '(defaults)']));
    if (!values.json) sweepCaveat(run.stream);
    return 0;
  }
  if (command === 'sweep') {
    if (!values['max-split']) throw new UsageError('sweep needs --max-split, e.g. --max-split 20,64,128,512,none (or --param and --values)');
    const settings = parseMaxSplitList(values['max-split']);
    const { snapshot, traces } = await loadForReplay(file);
    if (!traces.some((t) => t.length > 0)) return nothingToSweep(file);
    const { stream } = replaySnapshot(snapshot, { statsOnly: true, until: -1, ...(traces[0] ? { trace: traces[0] } : {}) });
    const rows = sweepMaxSplit(snapshot, settings, { stream, ...(capacity !== undefined ? { capacity } : {}) });
    console.log(values.json ? JSON.stringify(rows, null, 1) : sweepTable(rows));
    if (!values.json) sweepCaveat(stream);
    return 0;
  }
  if (command === 'stats') return stats(file, values.device, conf, capacity, values.json ?? false);
  if (command === 'explain') return explainCommand(file, { ...(conf !== undefined ? { conf } : {}), capacity, json: values.json ?? false }, loadForReplay);
  if (command === 'open') return open(file, values.port, values.host);
  if (command === 'report') {
    const { target, bytes } = writeReport(file, values.out, conf);
    console.log(`wrote ${target} (${formatSize(bytes)}): open it in Chrome, from disk; it needs no server or network`);
    return 0;
  }
  if (values.addresses !== undefined && values.addresses !== 'recorded' && values.addresses !== 'simulated') {
    throw new UsageError(`--addresses must be recorded or simulated, not '${values.addresses}'`);
  }
  const indices = (option: 'empty-cache-at' | 'reset-peak-at'): number[] | undefined =>
    values[option]?.split(',').map((s) => {
      if (!/^\d+$/.test(s.trim())) throw new UsageError(`--${option} takes request indices, not '${s}'`);
      return Number(s);
    });
  const emptyCacheAfter = indices('empty-cache-at');
  const resetPeakAfter = indices('reset-peak-at');
  const d = deviceIndex(values.device);
  const until = values.until?.trim();
  if (until !== undefined && !/^\d+$/.test(until)) throw new UsageError(`--until takes a request index, not '${values.until}'`);
  // The stack frames: for --out, and for the categories of memory (trace/categories).
  const { snapshot, traces } = await loadForReplay(file, true);
  requireDevice(file, { snapshot, traces }, d);
  const run = replaySnapshot(snapshot, {
    ...(traces[d] ? { trace: traces[d] } : {}),
    statsOnly: !values.out,
    ...(conf !== undefined ? { conf } : {}),
    ...(capacity !== undefined ? { capacity } : {}),
    ...(values.addresses ? { addresses: values.addresses as AddressModel } : {}),
    ...(emptyCacheAfter ? { emptyCacheAfter } : {}),
    ...(resetPeakAfter ? { resetPeakAfter } : {}),
    ...(until !== undefined ? { until: Number(until) } : {}),
    device: d,
  });
  const { result } = run;
  if (values.out) {
    const format = /\.json$/i.test(values.out) ? 'json' : 'pickle';
    const details = traces[d]?.details;
    const exported = exportSnapshot(result, run.stream, { config: run.config, device: d, ...(details ? { sourceDetails: details } : {}) });
    writeFileSync(values.out, encodeSnapshotFile(exported, format));
  }
  const categories = categoriesJson(run.stream, traces[d]?.details, result);
  if (values.json) {
    for (const note of run.notes) console.error(noteLine(note));
    console.log(JSON.stringify({ stats: result.stats, ooms: oomsOf(result), caught_ooms: caughtOomsOf(result), categories: categories.json }));
    return 0;
  }
  console.log(`config:    ${configToString(run.config) || '(defaults)'}${sameDecisions(run.config, run.recorded) ? ' (as recorded)' : ''}`);
  const cap = run.capacity;
  console.log(`capacity:  ${cap ? `${formatSize(cap.bytes)} (${cap.kind === 'fraction' ? 'memory fraction cap' : 'device memory'}${run.inferredCap ? ', inferred from the recorded OOM' : ''})` : 'none'}`);
  console.log(`addresses: ${run.addresses}`);
  console.log(`requests:  ${run.stream.length}   trace events: ${result.events.length}`);
  printReplay(result, run.notes);
  const { totals } = categories;
  console.log(`at the peak of live memory (request ${totals.peakRequest}): ${categorySentence(totals.atPeak)} (splitscope explain says more)`);
  if (values.out) console.log(`wrote ${values.out}`);
  return 0;
}

/** --device's index (0 when not given); a usage error for anything but a whole number. */
function deviceIndex(arg: string | undefined): number {
  const device = arg?.trim() ?? '0';
  if (!/^\d+$/.test(device)) throw new UsageError(`--device takes a device index, not '${arg}'`);
  return Number(device);
}

/** splitscope stats: the final state as recorded (segsum, pools, free blocks), then as the model has it at the end. */
async function stats(file: string, deviceArg: string | undefined, conf: string | undefined, capacity: Capacity | null | undefined, json: boolean): Promise<number> {
  const d = deviceIndex(deviceArg);
  const { snapshot, traces } = await loadForReplay(file, true);
  requireDevice(file, { snapshot, traces }, d);
  const run = replaySnapshot(snapshot, {
    ...(traces[d] ? { trace: traces[d] } : {}),
    statsOnly: true,
    device: d,
    ...(conf !== undefined ? { conf } : {}),
    ...(capacity !== undefined ? { capacity } : {}),
  });
  const pools = segmentsByPool(snapshot);
  const free = freeBlocksBySize(snapshot);
  const f = fragmentation(run.result.allocator);
  if (json) {
    const categories = categoriesJson(run.stream, traces[d]?.details, run.result).json;
    console.log(JSON.stringify({ segsum: segmentSummary(snapshot), pools, freeBlocks: free, fragmentation: f, stats: run.result.stats, categories }));
    return 0;
  }
  console.log(segmentSummary(snapshot));
  console.log('Segments by pool and stream (as recorded):');
  const header = ['device', 'pool', 'stream', 'segments', 'reserved', 'allocated', 'pending free', 'free blocks', 'free', 'largest free'];
  const lines = pools.map((r) => [
    `cuda:${r.device}`,
    `${r.pool} ${r.small ? 'small' : 'large'}`,
    String(r.stream),
    String(r.segments),
    formatSize(r.reserved),
    formatSize(r.allocated),
    formatSize(r.pendingFree),
    String(r.freeBlocks),
    formatSize(r.freeBytes),
    formatSize(r.largestFree),
  ]);
  console.log(table(header, lines));
  console.log('\nFree blocks by size (as recorded):');
  console.log(table(['size', 'blocks', 'bytes'], free.map((c) => [c.label, String(c.blocks), formatSize(c.bytes)])));
  console.log(`\nThe model at the end (${configToString(run.config) || 'the defaults'}${sameDecisions(run.config, run.recorded) ? ', as recorded' : ''}):`);
  for (const note of run.notes) console.log(noteLine(note));
  console.log(
    `  reserved - allocated ${formatSize(f.reservedMinusAllocated)}, inactive split ${formatSize(f.inactiveSplit)}, ` +
      `largest free block ${formatSize(f.largestFreeBlock)}, external fragmentation ${(f.externalRatio * 100).toFixed(1)}%`,
  );
  console.log(statsTable(run.result.stats));
  return 0;
}

/** splitscope report: the self-contained page with FILE inside (gzip-compressed, base64), under --conf. */

/** splitscope open: serves the page with FILE beside it until interrupted. */
async function open(file: string, portArg: string | undefined, hostArg: string | undefined): Promise<number> {
  const port = portArg?.trim() ?? '0';
  if (!/^\d+$/.test(port) || Number(port) > 65535) throw new UsageError(`--port takes a port number, not '${portArg}'`);
  const bytes = readBytes(file);
  // Refused here as the page would refuse it, before a browser is pointed at it.
  decodeSnapshotForReplay(bytes, { gunzip: nodeGunzip });
  const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
  let server;
  try {
    server = await serveOpen(dist, basename(file), bytes, hostArg?.trim() || '127.0.0.1', Number(port));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'EADDRINUSE' ? `port ${port} is in use: pick another with --port` : (e as Error).message);
  }
  console.log(`splitscope: ${file} is open at ${server.url}`);
  console.log('(served from this machine only; Ctrl+C stops it)');
  return new Promise<number>(() => {});
}

/** Columns padded to their widest cell, the first left-aligned. */
function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  return [header, ...lines].map((l) => '  ' + l.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

/** A snapshot without history (segments only) still shows its moment: only a device it lacks is a mistake. */
function requireDevice(file: string, { snapshot, traces }: SnapshotForReplay, d: number): void {
  if (d > 0 && !traces[d]?.length && !snapshot.device_traces[d]?.length && !snapshot.segments.some((s) => (s.device ?? 0) === d)) {
    throw new UsageError(`${file} has no trace for device ${d}, nor segments (it has ${Math.max(traces.length, snapshot.device_traces.length)} device trace(s))`);
  }
}

/** Under a sweep's table: how far "none" in its first-OOM column reaches, where the recording does not cover the whole run. */
function sweepCaveat(stream: RequestStream): void {
  const caveat = coverageCaveat(coverageOf(stream));
  if (caveat) console.log(`note: ${caveat}`);
}

/** A snapshot without allocation history has one moment and no requests: a sweep has nothing to vary. */
function nothingToSweep(file: string): number {
  console.error(`splitscope: ${file}: ${NO_HISTORY}`);
  return 1;
}

/** What entry.ts read of the files before this module loaded (early-read.ts), until taken. */
let early: EarlyRead[] = [];

/** `details`: with each entry's time and stack frames (for an export). */
async function loadForReplay(file: string, details = false): Promise<SnapshotForReplay> {
  const read = early.find((r) => r.file === file) ?? null;
  early = early.filter((r) => r !== read);
  const options = { gunzip: nodeGunzip, details };
  if (read?.inflating) return decodeSnapshotStream(read.inflating, options);
  return decodeSnapshotForReplay(read?.bytes ?? readBytes(file), options);
}


/** `first`: the column that names each row (max_split_size_mb, or the whole config for a --param sweep). */
function sweepTable(rows: SweepRow[], first: [string, (r: SweepRow) => string] = ['max_split_mb', (r) => (r.max_split_size_mb === null ? 'none' : String(r.max_split_size_mb))]): string {
  // The first OOM, not a count: PyTorch raises there, and the requests after it are what the recording
  // did when that request succeeded (a count past it reads as if the run went on).
  const header = [first[0], 'peak reserved', 'peak allocated', 'first OOM', 'retries', 'dev allocs', 'dev frees', 'largest free@peak', 'frag@peak'];
  const lines = rows.map((r) => [
    first[1](r),
    formatSize(r['reserved_bytes.all.peak']),
    formatSize(r['allocated_bytes.all.peak']),
    r.first_oom_request === null ? 'none' : `request ${r.first_oom_request}`,
    String(r.num_alloc_retries),
    String(r.num_device_alloc),
    String(r.num_device_free),
    formatSize(r.largest_free_block_at_peak),
    r.fragmentation_at_peak.toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  return [header, ...lines].map((l) => l.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n');
}

function failed(e: unknown): void {
  if (e instanceof UsageError || (e instanceof TypeError && (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
    console.error(`splitscope: ${e.message}\nRun 'splitscope --help' for usage.`);
    process.exitCode = 2;
  } else if (e instanceof ImportError || e instanceof ConfigError) {
    console.error(`splitscope: ${e.message}`);
    process.exitCode = 1;
  } else {
    console.error(`splitscope: internal error: ${(e as Error).message}`);
    process.exitCode = 70;
  }
}

/** Runs the command line `argv`; `read`: what entry.ts read of its files already. */
export function runCli(argv: string[], read: EarlyRead[]): void {
  early = read;
  // A read that was not taken (a mistake on the command line, say) stops inflating.
  const untaken = (): void => early.forEach((r) => r.inflating?.cancel());
  main(argv).then(
    (code) => {
      untaken();
      process.exitCode = code;
    },
    (e) => {
      untaken();
      failed(e);
    },
  );
}
