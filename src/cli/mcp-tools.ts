// splitscope mcp's tools: each one's input schema (zod), hints and description; its `check`, run on the
// server's own thread at once (the files named are regular files, the settings parse, an `out` lies in
// the server's folder), so that a mistake is answered without waiting for any other call; and its `run`,
// the work, on a worker thread (mcp-worker.ts), over the functions the CLI's commands call. What a tool
// returns is JSON with snake_case keys; every answer from a replay carries its `notes`, among them the
// "Inconsistent trace: ..." warnings of a recording that contradicts itself. A mistake's message names
// the tool's parameters, not the CLI's flags.
import { readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { z } from 'zod';
import { parseAllocConf } from '../allocator/config-parser';
import { configToString } from '../allocator/config';
import { batchRows, type BatchRow } from '../trace/batch/batch-rows';
import { batchSummary } from '../trace/batch/batch-summary';
import { categorize, categorySentence, categoryTotals } from '../trace/categories/categories';
import { checkRecordings } from '../trace/check/check';
import { parseCategoryLimit, parseGrowth, type Limit } from '../trace/check/check-limits';
import { checkJson } from '../trace/check/check-report';
import { fragmentation } from '../trace/measures/fragmentation';
import { freeBlocksBySize, segmentsByPool, segmentSummary } from '../trace/measures/segment-summary';
import { coverageOf } from '../trace/replay/coverage';
import { NO_HISTORY, replaySnapshot } from '../trace/replay/replay-snapshot';
import { decodeSnapshotForReplay, type SnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { parseMaxSplitList, parseParamValues, sweepMaxSplit, sweepParam, sweepRow } from '../trace/sweep/sweep';
import { capacityOption, categoriesJson, caughtOomsOf, oomsOf, UsageError } from './cli-format';
import { explainAnswer } from './explain';
import { nodeGunzip } from './node-gunzip';
import { checkOutput, writeOutput } from './output-file';
import { confinedOut } from './mcp-out';
import { predictAnswer } from './predict';
import { readBytes, regularFile } from './read-file';
import { plannedRecording, type PlannedRecording } from './recording-worker';
import { writeReport } from './report';

/** What a tool's check knows of the server. */
export interface ToolContext {
  /** The one folder the tools write into (a real path). */
  outDir: string;
}

/** The MCP tool hints: only report and batch write (files, in the server's folder). */
const READS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITES = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** How a refusal to replace a file names the way to ask (output-file.ts). */
const OVERWRITE_WORDS = 'overwrite: true';

// ---- Messages in the tools' words ----

/** The CLI's flags as the tools' parameters: --max-split -> max_split, --force -> overwrite: true. */
export function paramWords(message: string): string {
  return message.replace(/(^|[\s('"`])--([a-z][a-z0-9-]*)/g, (_, before: string, flag: string) => `${before}${flag === 'force' ? OVERWRITE_WORDS : flag.replace(/-/g, '_')}`);
}

/** `work`, its error's message starting with the parameter it is about (unless it already names it). */
function param<T>(name: string, work: () => T): T {
  try {
    return work();
  } catch (e) {
    const message = paramWords((e as Error).message ?? String(e));
    throw new UsageError(message.startsWith(name) ? message : `${name}: ${message}`);
  }
}

/** A JSON value with each camelCase key (an identifier's: "freeBlocks", never "backend:cudaMallocAsync") in snake_case. */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[/^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/.test(k) ? k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : k] = snakeKeys(v);
  return out;
}

// ---- Inputs ----

const fileParam = z.string().describe('Path of a torch.cuda.memory._dump_snapshot pickle (.pickle, .pickle.gz) or JSON');
const confParam = z.string().optional().describe('A whole PYTORCH_CUDA_ALLOC_CONF string replacing the recorded one, e.g. expandable_segments:True');
const capacityParam = z
  .string()
  .optional()
  .describe('A memory cap as set_per_process_memory_fraction sets it: bytes, 6GiB, 80GB, or none (default: the cap a recorded OOM shows)');
const overwriteParam = z.boolean().optional().describe('Replace the file `out` names if it exists (default: refuse)');

/** A snapshot file the tool will read: refused by name, as parameter `name`, unless a regular file. */
function readable(name: string, path: string): void {
  param(name, () => regularFile(path));
}

function checkConf(conf: string | undefined, name = 'conf'): void {
  if (conf !== undefined) param(name, () => parseAllocConf(conf));
}

function checkCapacity(capacity: string | undefined): void {
  if (capacity !== undefined) param('capacity', () => capacityOption(capacity));
}

const capacityOf = (text: string | undefined) => (text === undefined ? {} : { capacity: capacityOption(text) ?? null });
const confOf = (conf: string | undefined) => (conf === undefined ? {} : { conf });
const traceOf = (l: SnapshotForReplay, d = 0) => (l.traces[d] ? { trace: l.traces[d] } : {});

/** A snapshot file, with its stack frames (the categories need them). */
function load(file: string): SnapshotForReplay {
  return decodeSnapshotForReplay(readBytes(file), { gunzip: nodeGunzip, details: true });
}

/** A replay's warnings that the recording contradicts itself (replay-snapshot.ts's replayNotes). */
const inconsistent = (notes: readonly string[]): string[] => notes.filter((n) => n.startsWith('Inconsistent trace:'));

/** The notes of `loaded` replayed up to its first request under `options`: the state it began with, what it says of itself. */
function startNotes(loaded: SnapshotForReplay, options: { conf?: string; capacity?: string; stream?: PlannedRecording['stream'] }): string[] {
  return replaySnapshot(loaded.snapshot, {
    ...traceOf(loaded),
    statsOnly: true,
    until: -1,
    ...confOf(options.conf),
    ...capacityOf(options.capacity),
    ...(options.stream ? { stream: options.stream } : {}),
  }).notes;
}

const unique = (notes: readonly string[]): string[] => [...new Set(notes)];

/** A snapshot with no allocation history: nothing to sweep. */
function requireHistory(file: string, loaded: SnapshotForReplay): void {
  if (!loaded.traces.some((t) => t.length > 0)) throw new UsageError(`${file}: ${NO_HISTORY}`);
}

/** As main.ts's stats: only a device the snapshot lacks altogether is a mistake. */
function requireDevice(file: string, { snapshot, traces }: SnapshotForReplay, d: number): void {
  if (d > 0 && !traces[d]?.length && !snapshot.device_traces[d]?.length && !snapshot.segments.some((s) => (s.device ?? 0) === d)) {
    throw new UsageError(`device: ${file} has no trace for device ${d}, nor segments (it has ${Math.max(traces.length, snapshot.device_traces.length)} device trace(s))`);
  }
}

/** batch's INPUTS: files as named, folders searched for snapshot names (each folder once: a link back up
 * the tree is not followed again); sorted, each once. A file found that is not a regular file becomes an
 * error row when it is read (read-file.ts refuses it by name). */
const SNAPSHOT_NAME = /\.(pickle|pkl|json)(\.gz)?$/i;
function batchFiles(inputs: readonly string[]): string[] {
  const out = new Set<string>();
  const folders = new Set<string>();
  const walk = (path: string, named: boolean): void => {
    let st;
    try {
      st = statSync(path);
    } catch {
      if (named) throw new UsageError(`inputs: cannot read ${path}: no such file or folder`);
      out.add(resolve(path)); // a broken link: its row says why
      return;
    }
    if (!st.isDirectory()) {
      out.add(resolve(path));
      return;
    }
    const id = `${st.dev}:${st.ino}`;
    if (folders.has(id)) return;
    folders.add(id);
    let names: string[] = [];
    try {
      names = readdirSync(path).sort();
    } catch (e) {
      if (named) throw new UsageError(`inputs: cannot read the folder ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    for (const name of names) {
      const p = join(path, name);
      let isDir = false;
      try {
        isDir = statSync(p).isDirectory();
      } catch {
        // Named like a snapshot: its row says why it cannot be read.
      }
      if (isDir || SNAPSHOT_NAME.test(name)) walk(p, false);
    }
  };
  for (const i of inputs) walk(i, true);
  return [...out].sort();
}

// ---- The tools ----

export interface Tool {
  name: string;
  title: string;
  description: (ctx: ToolContext) => string;
  inputSchema: z.ZodRawShape;
  annotations: typeof READS;
  /** On the server's thread, at once: refuses what would fail, and gives the arguments the run gets. */
  check: (args: Record<string, unknown>, ctx: ToolContext) => Record<string, unknown>;
  /** On a worker thread: the answer (JSON; keys made snake_case after). */
  run: (args: Record<string, unknown>) => unknown;
}

function tool<S extends z.ZodRawShape>(t: {
  name: string;
  title: string;
  description: string | ((ctx: ToolContext) => string);
  inputSchema: S;
  annotations: typeof READS;
  check?: (args: z.infer<z.ZodObject<S>>, ctx: ToolContext) => z.infer<z.ZodObject<S>> | void;
  run: (args: z.infer<z.ZodObject<S>>) => unknown;
}): Tool {
  const { description } = t;
  return {
    name: t.name,
    title: t.title,
    description: typeof description === 'string' ? () => description : description,
    inputSchema: t.inputSchema,
    annotations: t.annotations,
    check: (args, ctx) => (t.check?.(args as z.infer<z.ZodObject<S>>, ctx) ?? args) as Record<string, unknown>,
    run: (args) => t.run(args as z.infer<z.ZodObject<S>>),
  };
}

const summarize = tool({
  name: 'summarize',
  title: 'Summarize a snapshot',
  description:
    'A snapshot in brief, as recorded: requests, config, cap, peaks, OOMs, what the memory was at the peak, how much of the run it covers, and notes (warnings that the recording contradicts itself among them).',
  inputSchema: { file: fileParam },
  annotations: READS,
  check: (a) => readable('file', a.file),
  run: ({ file }) => {
    const loaded = load(file);
    const trace = loaded.traces[0];
    const run = replaySnapshot(loaded.snapshot, { ...traceOf(loaded), statsOnly: true });
    const totals = categoryTotals(run.stream, categorize(run.stream, trace?.details), run.result.ooms[0]?.request ?? run.stream.length - 1);
    return {
      file: basename(file),
      devices: loaded.traces.length,
      requests: run.stream.length,
      recorded_conf: configToString(run.recorded),
      capacity: run.capacity?.bytes ?? null,
      'reserved_bytes.all.peak': run.result.stats['reserved_bytes.all.peak'],
      'allocated_bytes.all.peak': run.result.stats['allocated_bytes.all.peak'],
      ooms: oomsOf(run.result).slice(0, 5),
      at_peak: categorySentence(totals.atPeak),
      coverage: coverageOf(run.stream),
      notes: run.notes,
    };
  },
});

const stats = tool({
  name: 'stats',
  title: 'The final state of a snapshot',
  description:
    "The final state, as splitscope stats --json: what python -m torch.cuda._memory_viz stats prints (segsum), segments by pool and stream and free blocks by size as recorded, and the model's state at the end (fragmentation, memory_stats(), categories), with notes.",
  inputSchema: {
    file: fileParam,
    device: z.number().int().min(0).optional().describe('Which GPU, in a snapshot of several (default: 0)'),
    conf: confParam,
    capacity: capacityParam,
  },
  annotations: READS,
  check: (a) => {
    readable('file', a.file);
    checkConf(a.conf);
    checkCapacity(a.capacity);
  },
  run: ({ file, device, conf, capacity }) => {
    const d = device ?? 0;
    const loaded = load(file);
    requireDevice(file, loaded, d);
    const { snapshot, traces } = loaded;
    const run = replaySnapshot(snapshot, { ...traceOf(loaded, d), statsOnly: true, device: d, ...confOf(conf), ...capacityOf(capacity) });
    return {
      segsum: segmentSummary(snapshot),
      pools: segmentsByPool(snapshot),
      freeBlocks: freeBlocksBySize(snapshot),
      fragmentation: fragmentation(run.result.allocator),
      stats: run.result.stats,
      categories: categoriesJson(run.stream, traces[d]?.details, run.result).json,
      notes: run.notes,
    };
  },
});

const replayTool = tool({
  name: 'replay',
  title: 'Replay a snapshot',
  description:
    'Replays a snapshot under a config and cap with the allocator model: memory_stats() names, each OOM (request, message, why), and the categories of memory (as splitscope replay --json), with notes.',
  inputSchema: { file: fileParam, conf: confParam, capacity: capacityParam },
  annotations: READS,
  check: (a) => {
    readable('file', a.file);
    checkConf(a.conf);
    checkCapacity(a.capacity);
  },
  run: ({ file, conf, capacity }) => {
    const loaded = load(file);
    const run = replaySnapshot(loaded.snapshot, { ...traceOf(loaded), statsOnly: true, ...confOf(conf), ...capacityOf(capacity) });
    return {
      stats: run.result.stats,
      ooms: oomsOf(run.result),
      caught_ooms: caughtOomsOf(run.result),
      categories: categoriesJson(run.stream, loaded.traces[0]?.details, run.result).json,
      notes: run.notes,
    };
  },
});

const PARAMS = ['roundup_power2_divisions', 'garbage_collection_threshold'] as const;

const sweep = tool({
  name: 'sweep',
  title: 'Sweep max_split_size_mb (or another setting)',
  description:
    'Replays a snapshot at several max_split_size_mb values (as splitscope sweep --max-split --json), each on top of `conf` (default: the recorded config), or, with `param` and `values`, at several values of that setting: peaks, first OOM, retries, cudaMalloc churn, fragmentation at the peak. Answers { rows, notes }.',
  inputSchema: {
    file: fileParam,
    max_split: z.string().default('20,64,128,256,512,none').describe('max_split_size_mb values, comma-separated; none for unlimited'),
    conf: z.string().optional().describe('The PYTORCH_CUDA_ALLOC_CONF each row starts from (its max_split_size_mb, or `param`, replaced), e.g. expandable_segments:True'),
    capacity: capacityParam,
    param: z.enum(PARAMS).optional().describe('Sweep this setting instead of max_split_size_mb'),
    values: z.string().optional().describe("`param`'s values, comma-separated, e.g. 0,2,4,8 or 0.5,0.8"),
  },
  annotations: READS,
  check: (a) => {
    readable('file', a.file);
    checkConf(a.conf);
    checkCapacity(a.capacity);
    if (a.param !== undefined) {
      const p = a.param;
      if (a.values === undefined) throw new UsageError(`values: param ${p} needs values, e.g. ${p === 'roundup_power2_divisions' ? '0,2,4,8,16' : '0.5,0.6,0.8'}`);
      param('values', () => parseParamValues(p, a.values!));
    } else {
      if (a.values !== undefined) throw new UsageError('values: values go with param (roundup_power2_divisions or garbage_collection_threshold); for max_split_size_mb, give max_split');
      param('max_split', () => parseMaxSplitList(a.max_split));
    }
  },
  run: ({ file, max_split, conf, capacity, param: p, values }) => {
    const loaded = load(file);
    requireHistory(file, loaded);
    const run = replaySnapshot(loaded.snapshot, { ...traceOf(loaded), statsOnly: true, until: -1, ...confOf(conf), ...capacityOf(capacity) });
    if (p !== undefined) {
      const base = conf !== undefined ? run.config : run.recorded;
      return { rows: sweepParam(run.stream, base, run.recorded, p, parseParamValues(p, values!), run.capacity), notes: run.notes };
    }
    const settings = parseMaxSplitList(max_split);
    // Without conf, what splitscope sweep --max-split prints; with it, each row is conf with its max_split_size_mb.
    const rows =
      conf === undefined
        ? sweepMaxSplit(loaded.snapshot, settings, { stream: run.stream, ...capacityOf(capacity) })
        : settings.map((mb) => sweepRow(run.stream, run.config, run.recorded, mb, run.capacity));
    return { rows, notes: run.notes };
  },
});

const explain = tool({
  name: 'explain',
  title: "Explain a snapshot's OOM or peak",
  description:
    "The story of a snapshot's OOM (or its peak), as splitscope explain --json: memory by category (parameters, gradients, optimizer state, activations, ...), reserved but unallocated and where, steps, suspected leaks, and fixes each checked by replay (settings, empty_cache, freeing a site earlier), with notes.",
  inputSchema: { file: fileParam, conf: confParam, capacity: capacityParam },
  annotations: READS,
  check: (a) => {
    readable('file', a.file);
    checkConf(a.conf);
    checkCapacity(a.capacity);
  },
  run: ({ file, conf, capacity }) => {
    const loaded = load(file);
    const { json, notes } = explainAnswer(loaded, { ...confOf(conf), capacity: capacity === undefined ? undefined : (capacityOption(capacity) ?? null) });
    // The plan's notes, and what the replay finds of the state the recording began with.
    return { ...json, notes };
  },
});

const compare = tool({
  name: 'compare',
  title: 'Compare two recordings of one job',
  description:
    'Compares two recordings of one job (before and after a change) under one config and cap, as splitscope check --json: what grew (peaks, categories, sites, churn) and, with limits, whether each holds; notes name the recording they are about.',
  inputSchema: {
    baseline: fileParam,
    new: fileParam,
    conf: confParam,
    capacity: capacityParam,
    max_peak_reserved: z.string().optional().describe('Growth allowed of peak reserved memory, e.g. +5% or +512MiB'),
    max_peak_allocated: z.string().optional().describe('Growth allowed of peak allocated memory'),
    category: z.array(z.string()).optional().describe('Growth allowed of a category, e.g. activation:+10%'),
    no_new_oom: z.boolean().optional().describe('Fail when the new run runs out of memory and the baseline did not'),
  },
  annotations: READS,
  check: (a) => {
    readable('baseline', a.baseline);
    readable('new', a.new);
    checkConf(a.conf);
    checkCapacity(a.capacity);
    limitsOf(a);
  },
  run: (a) => {
    const limits = limitsOf(a);
    const x = load(a.baseline);
    const y = load(a.new);
    const rec = (path: string, l: SnapshotForReplay) => ({ name: basename(path), snapshot: l.snapshot, ...traceOf(l) });
    const result = checkJson(checkRecordings(rec(a.baseline, x), rec(a.new, y), limits, { ...confOf(a.conf), ...capacityOf(a.capacity) }));
    // Each run's notes (check --json's), and all of them together, each naming its recording.
    const notes = [
      ...result.baseline.notes.map((n) => `baseline (${basename(a.baseline)}): ${n}`),
      ...result.new.notes.map((n) => `new (${basename(a.new)}): ${n}`),
    ];
    return { ...result, notes };
  },
});

function limitsOf(a: { max_peak_reserved?: string | undefined; max_peak_allocated?: string | undefined; category?: string[] | undefined; no_new_oom?: boolean | undefined }): Limit[] {
  const limits: Limit[] = [];
  if (a.max_peak_reserved !== undefined) limits.push({ figure: 'peak_reserved', growth: param('max_peak_reserved', () => parseGrowth(a.max_peak_reserved!, 'max_peak_reserved')) });
  if (a.max_peak_allocated !== undefined) limits.push({ figure: 'peak_allocated', growth: param('max_peak_allocated', () => parseGrowth(a.max_peak_allocated!, 'max_peak_allocated')) });
  for (const c of a.category ?? []) limits.push(param('category', () => parseCategoryLimit(c)));
  if (a.no_new_oom) limits.push({ figure: 'no_new_oom' });
  return limits;
}

const predict = tool({
  name: 'predict',
  title: 'Predict another size',
  description:
    'Predicts the program at another size (batch or sequence length) from its recordings at two sizes or more, as splitscope predict --json: the predicted run replayed (stats, OOMs, which cards it fits) at `at`, or with `fit` the largest size that fits the capacity under each config. Near the cap a size is judged under several address layouts, by most (where the CUDA driver puts the segments can decide it): `address_layouts`, and `largest_split` / `first_failing_split` where they split. Every prediction carries its error band, measured on the recordings (`prediction.band`: half-widths relative to the peaks, their ranges in bytes, each measurement); with `fit`, `answer` says where the band crosses the cap ("68, or 69 within the prediction\'s error (±2.1%) of the cap"). Notes carry each recording\'s inconsistency warnings.',
  inputSchema: {
    recordings: z.array(z.object({ size: z.number().positive(), file: fileParam })).min(2).describe('The same script recorded at two sizes or more, each with the size it ran at'),
    at: z.number().positive().optional().describe('The size to predict'),
    fit: z.boolean().optional().describe('Find the largest size that fits `capacity` instead'),
    conf: z.array(z.string()).optional().describe('PYTORCH_CUDA_ALLOC_CONF strings: one for `at`; for `fit`, each side by side'),
    capacity: capacityParam,
  },
  annotations: READS,
  check: (a) => {
    if (a.at === undefined && !a.fit) throw new UsageError('predict needs `at` (the size to predict) or `fit: true` with `capacity` (the largest size that fits); neither was given');
    if (a.at !== undefined && a.fit) throw new UsageError('predict takes `at` or `fit: true`, not both');
    if (a.fit && a.capacity === undefined) throw new UsageError('fit needs capacity: the memory the run must fit in (e.g. 80GB, or the H200: 150109880320)');
    if (a.at !== undefined && (a.conf?.length ?? 0) > 1) throw new UsageError('conf: predict with `at` takes one config (several only with fit)');
    a.recordings.forEach((r, k) => readable(`recordings[${k}].file`, r.file));
    a.conf?.forEach((c, k) => checkConf(c, `conf[${k}]`));
    checkCapacity(a.capacity);
  },
  run: async (a) => {
    const warnings: string[] = [];
    const result = await predictAnswer(
      a.recordings,
      { ...(a.at !== undefined ? { at: String(a.at) } : {}), ...(a.fit ? { fit: true } : {}), ...(a.conf ? { conf: a.conf } : {}), ...(a.capacity !== undefined ? { capacity: a.capacity } : {}) },
      async (files) =>
        files.map((f) => {
          const loaded = load(f);
          const planned = plannedRecording(loaded);
          warnings.push(...inconsistent(startNotes(loaded, { stream: planned.stream })).map((n) => `${basename(f)}: ${n}`));
          return planned;
        }),
    );
    return result.kind === 'at' ? { ...result.json, notes: unique([...warnings, ...result.notes]) } : { ...result.json, notes: unique(warnings) };
  },
});

const batch = tool({
  name: 'batch',
  title: "Batch a fleet's snapshots",
  description: (ctx) =>
    `A fleet's snapshots (files, or folders searched for .pickle, .pickle.gz, .pkl, .json) replayed under each config, as splitscope batch: a row per file and config (peaks, first OOM as far as the recording reaches, reserved but unallocated at it, the memory at the peak, notes), written as JSON lines to \`out\` in ${ctx.outDir} (the only folder this server writes into), and answered with the rows, what they say together (summary), the file's absolute path and its size in bytes.`,
  inputSchema: {
    inputs: z.array(z.string()).min(1).describe('Snapshot files or folders'),
    conf: z.array(z.string()).optional().describe('PYTORCH_CUDA_ALLOC_CONF strings, each a row per file (default: as recorded)'),
    capacity: capacityParam,
    out: z.string().optional().describe("The results file, a path in the server's folder (default: batch.jsonl)"),
    overwrite: overwriteParam,
  },
  annotations: WRITES,
  check: (a, ctx) => {
    a.inputs.forEach((input, k) => {
      const name = `inputs[${k}]`;
      let st;
      try {
        st = statSync(input);
      } catch {
        throw new UsageError(`${name}: cannot read ${input}: no such file or folder`);
      }
      if (!st.isDirectory()) readable(name, input);
    });
    a.conf?.forEach((c, k) => checkConf(c, `conf[${k}]`));
    checkCapacity(a.capacity);
    const out = confinedOut(ctx.outDir, a.out ?? 'batch.jsonl', 'out');
    param('out', () => checkOutput(out, { overwrite: a.overwrite ?? false, force: OVERWRITE_WORDS }));
    return { ...a, out };
  },
  run: (a) => {
    const confs: (string | null)[] = a.conf?.length ? a.conf : [null];
    const capacity = capacityOption(a.capacity);
    const rows: BatchRow[] = [];
    const files = batchFiles(a.inputs);
    for (const file of files) {
      try {
        rows.push(...batchRows(file, load(file), confs, capacity));
      } catch (e) {
        rows.push(...confs.map((conf) => ({ file, conf, ok: false as const, error: (e as Error).message })));
      }
    }
    const out = a.out!;
    param('out', () => writeOutput(out, rows.map((r) => `${JSON.stringify(r)}\n`).join(''), { overwrite: a.overwrite ?? false, inputs: files, force: OVERWRITE_WORDS }));
    return { path: out, bytes: statSync(out).size, files: files.length, rows, summary: batchSummary(rows) };
  },
});

/** FILE.report.html, as splitscope report names it. */
const reportName = (file: string): string => `${basename(file).replace(/(\.pickle|\.pkl|\.json)?(\.gz)?$/i, '')}.report.html`;

const report = tool({
  name: 'report',
  title: 'Write a self-contained HTML report',
  description: (ctx) =>
    `Writes one self-contained HTML file, the splitscope page with the snapshot inside, that opens offline in Chrome with every view (for a bug report or a colleague), to \`out\` in ${ctx.outDir} (the only folder this server writes into; an existing file is replaced only with overwrite: true); answers its absolute path and its size on disk in bytes.`,
  inputSchema: {
    file: fileParam,
    out: z.string().optional().describe("Where to write it: a path in the server's folder (default: FILE.report.html)"),
    conf: confParam,
    overwrite: overwriteParam,
  },
  annotations: WRITES,
  check: (a, ctx) => {
    readable('file', a.file);
    checkConf(a.conf);
    const out = confinedOut(ctx.outDir, a.out ?? reportName(a.file), 'out');
    param('out', () => checkOutput(out, { overwrite: a.overwrite ?? false, inputs: [a.file], force: OVERWRITE_WORDS }));
    return { ...a, out };
  },
  run: ({ file, out, conf, overwrite }) => {
    const { target } = writeReport(file, out!, conf, { force: overwrite ?? false, forceWords: OVERWRITE_WORDS });
    return { path: target, bytes: statSync(target).size };
  },
});

/** The tools, in the order they are listed. */
export const TOOLS: readonly Tool[] = [summarize, stats, replayTool, sweep, explain, compare, predict, batch, report];

export const toolNamed = (name: string): Tool | undefined => TOOLS.find((t) => t.name === name);
