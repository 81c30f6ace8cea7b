// splitscope replay|sweep|stats: the allocator model over a PyTorch memory snapshot, from the shell.
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
import { decodeSnapshotForReplay, type SnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { snapshotBytesFor } from './snapshot-out';
import { decodeSnapshotStream } from '../trace/snapshot/snapshot-stream';
import { PARAM_VALUES, parseMaxSplitList, parseParamValues, sweepMaxSplit, sweepParam, type SweepRow } from '../trace/sweep/sweep';
import { COMMANDS, OPTIONS } from './cli-options';
import { commandHelp, overallHelp, USAGES } from './cli-usage';
import { capacityOption, categoriesJson, noteLine, oomsOf, caughtOomsOf, printReplay, statsTable, UsageError } from './cli-format';
import { categorySentence } from '../trace/categories/categories';
import { predictCommand } from './predict';
import { decodeSideBySide, recordingWorker } from './recording-worker';
import { readBytes } from './read-file';
import { checkOutput, writeOutput } from './output-file';
import { writeReport } from './report';
import { explainCommand } from './explain';
import { checkCommand } from './check';
import { batchCommand, batchSummaryCommand, batchWorker } from './batch';
import { isMainThread, workerData } from 'node:worker_threads';
import type { EarlyRead } from './early-read';
import { nodeGunzip } from './node-gunzip';
import { isLoopback, serveOpen } from './open-server';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';


async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    if (command === 'help' && rest[0] && isCommand(rest[0])) console.log(commandHelp(rest[0]));
    else (command ? console.log : console.error)(overallHelp());
    return command ? 0 : 2;
  }
  if (command === 'batch-worker') return batchWorker(workerData);
  if (command === 'mcp-worker') return (await import('./mcp-worker')).mcpWorker();
  if (command === 'recording-worker') return recordingWorker();
  if (!isCommand(command)) throw new UsageError(`unknown command '${command}' (the commands: ${COMMANDS.join(', ')})`);
  // --help before anything else is read: a command's own usage, whatever else the line holds.
  const dashes = rest.indexOf('--');
  if ((dashes < 0 ? rest : rest.slice(0, dashes)).some((a) => a === '--help' || a === '-h')) {
    console.log(commandHelp(command));
    return 0;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: OPTIONS,
  });
  refuseOthers(command, rest);
  if (command === 'predict') return predictCommand(positionals, values, (files) => decodeSideBySide(files, (file) => loadForReplay(file, true)));
  if (command === 'batch') return batchCommand(positionals, values);
  if (command === 'batch-summary') return batchSummaryCommand(positionals, values.json ?? false);
  // Loaded only here: the SDK is most of its chunk.
  if (command === 'mcp') return (await import('./mcp')).serveMcp({ ...(values['out-dir'] !== undefined ? { outDir: values['out-dir'] } : {}), ...(values['call-timeout'] !== undefined ? { callTimeout: values['call-timeout'] } : {}) });
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
    printNotes(run.notes, values.json ?? false);
    console.log(values.json ? JSON.stringify(rows, null, 1) : sweepTable(rows, ['config', (r) => r.conf || '(defaults)']));
    if (!values.json) sweepCaveat(run.stream);
    return 0;
  }
  if (command === 'sweep') {
    if (!values['max-split']) throw new UsageError('sweep needs --max-split, e.g. --max-split 20,64,128,512,none (or --param and --values)');
    const settings = parseMaxSplitList(values['max-split']);
    const { snapshot, traces } = await loadForReplay(file);
    if (!traces.some((t) => t.length > 0)) return nothingToSweep(file);
    const { stream, notes } = replaySnapshot(snapshot, { statsOnly: true, until: -1, ...(traces[0] ? { trace: traces[0] } : {}) });
    const rows = sweepMaxSplit(snapshot, settings, { stream, ...(capacity !== undefined ? { capacity } : {}) });
    printNotes(notes, values.json ?? false);
    console.log(values.json ? JSON.stringify(rows, null, 1) : sweepTable(rows));
    if (!values.json) sweepCaveat(stream);
    return 0;
  }
  if (command === 'stats') return stats(file, values.device, conf, capacity, values.json ?? false);
  if (command === 'explain') return explainCommand(file, { ...(conf !== undefined ? { conf } : {}), capacity, json: values.json ?? false }, loadForReplay);
  if (command === 'open') return open(file, values.port, values.host, values['allow-remote'] ?? false);
  if (command === 'report') {
    const { target, bytes } = writeReport(file, values.out, conf, { force: values.force ?? false });
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
  const output = values.out !== undefined ? { overwrite: values.force ?? false, inputs: [file] } : null;
  if (output) checkOutput(values.out!, output);
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
  if (until !== undefined && Number(until) >= run.stream.length) {
    throw new UsageError(`--until ${until} is past the end: ${file} has ${run.stream.length} requests (0 to ${run.stream.length - 1})`);
  }
  if (values.out) {
    const details = traces[d]?.details;
    const exported = exportSnapshot(result, run.stream, { config: run.config, device: d, ...(details ? { sourceDetails: details } : {}) });
    writeOutput(values.out, snapshotBytesFor(values.out, exported), output!);
  }
  const categories = categoriesJson(run.stream, traces[d]?.details, result);
  if (values.json) {
    for (const note of run.notes) console.error(noteLine(note));
    console.log(JSON.stringify({ stats: result.stats, ooms: oomsOf(result), caught_ooms: caughtOomsOf(result), categories: categories.json, notes: run.notes }));
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

const isCommand = (name: string): name is (typeof COMMANDS)[number] => (COMMANDS as readonly string[]).includes(name);

/** An option that another command takes would be ignored here: refused by name, as parseArgs refuses unknown ones. */
function refuseOthers(command: (typeof COMMANDS)[number], args: readonly string[]): void {
  const own = new Set<string>(USAGES[command].options);
  const dashes = args.indexOf('--');
  for (const arg of dashes < 0 ? args : args.slice(0, dashes)) {
    const name = arg === '-o' ? 'out' : /^--([^=]+)/.exec(arg)?.[1];
    if (name !== undefined && name in OPTIONS && !own.has(name)) {
      throw new UsageError(`${command} does not take --${name} (its options: ${USAGES[command].options.map((o) => `--${o}`).join(', ')})`);
    }
  }
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
    for (const note of run.notes) console.error(noteLine(note));
    console.log(JSON.stringify(statsJson({ segsum: segmentSummary(snapshot), pools, free_blocks: free, fragmentation: f, stats: run.result.stats, categories, notes: run.notes })));
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
async function open(file: string, portArg: string | undefined, hostArg: string | undefined, allowRemote: boolean): Promise<number> {
  const port = portArg?.trim() ?? '0';
  if (!/^\d+$/.test(port) || Number(port) > 65535) throw new UsageError(`--port takes a port number, not '${portArg}'`);
  const host = hostArg?.trim() || '127.0.0.1';
  const local = isLoopback(host);
  if (!local && !allowRemote) {
    throw new UsageError(`--host ${host} would let other machines read ${file}: add --allow-remote to serve beyond this machine, or leave --host out (loopback)`);
  }
  const bytes = readBytes(file);
  // Refused here as the page would refuse it, before a browser is pointed at it.
  decodeSnapshotForReplay(bytes, { gunzip: nodeGunzip });
  const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
  let server;
  try {
    server = await serveOpen(dist, basename(file), bytes, host, Number(port));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'EADDRINUSE' ? `port ${port} is in use: pick another with --port` : code === 'EADDRNOTAVAIL' ? `--host ${host} is not an address of this machine` : (e as Error).message,
    );
  }
  console.log(`splitscope: ${file} is open at ${server.url}`);
  console.log(local ? '(served from this machine only; Ctrl+C stops it)' : `(served on ${host}: other machines that reach this one can read ${file}; Ctrl+C stops it)`);
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

/** A sweep's notes: before its table, or on stderr beside --json's rows (stdout stays one JSON value). */
function printNotes(notes: readonly string[], json: boolean): void {
  for (const note of notes) (json ? console.error : console.log)(noteLine(note));
}

/** stats --json's object, its keys snake_case all the way down (the pools' and free blocks' rows were camelCase). */
function statsJson(value: Record<string, unknown>): unknown {
  const snake = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(snake)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.includes('.') ? k : k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(x)]))
        : v;
  return snake(value);
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
    // An input that cannot be read or a setting PyTorch refuses: the user's to fix, as a usage error
    // is (exit 1 is check's "a limit broken", which a CI reads as a regression).
    console.error(`splitscope: ${e.message}`);
    process.exitCode = 2;
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
  let settled = false;
  // Nothing left to run while the command has not answered: a wait that can never end. Said, never a
  // silent exit 0.
  // (A worker thread's command answers its parent, not this.)
  if (isMainThread) process.once('beforeExit', () => {
    if (!settled) failed(new Error(`${argv[0]} stopped before it finished (a read that never completed)`));
  });
  main(argv).then(
    (code) => {
      settled = true;
      untaken();
      process.exitCode = code;
    },
    (e) => {
      settled = true;
      untaken();
      failed(e);
    },
  );
}
