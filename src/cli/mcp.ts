// splitscope mcp: the Model Context Protocol over stdio (the official TypeScript SDK), so that an agent
// can ask what a human asks the CLI: summarize a snapshot, replay it under a config and cap, sweep
// max_split_size_mb, explain its OOM or peak with fixes checked by replay, compare two recordings,
// predict another size, write a report. Each tool is a thin layer over the functions the CLI's
// commands call, its input typed by a zod schema; a file that cannot be read, a config PyTorch would
// refuse or any other mistake comes back as a tool error, and the server keeps serving. Nothing here
// writes to stdout: it is the protocol's.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { basename } from 'node:path';
import { z } from 'zod';
import { configToString } from '../allocator/config';
import { categorize, categorySentence, categoryTotals } from '../trace/categories/categories';
import { checkRecordings } from '../trace/check/check';
import { parseCategoryLimit, parseGrowth, type Limit } from '../trace/check/check-limits';
import { checkJson } from '../trace/check/check-report';
import { coverageOf } from '../trace/replay/coverage';
import { replaySnapshot } from '../trace/replay/replay-snapshot';
import { decodeSnapshotForReplay, type SnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { parseMaxSplitList, sweepMaxSplit } from '../trace/sweep/sweep';
import { capacityOption, categoriesJson, oomsOf, caughtOomsOf } from './cli-format';
import { explainAnswer } from './explain';
import { nodeGunzip } from './node-gunzip';
import { predictAnswer } from './predict';
import { plannedRecording, type PlannedRecording } from './recording-worker';
import { readBytes } from './read-file';
import { writeReport } from './report';

const VERSION = '0.1.0';

/** A snapshot file, with its stack frames (the categories need them). */
async function load(file: string): Promise<SnapshotForReplay> {
  return decodeSnapshotForReplay(readBytes(file), { gunzip: nodeGunzip, details: true });
}

const file = z.string().describe('Path of a torch.cuda.memory._dump_snapshot pickle (.pickle, .pickle.gz) or JSON');
const conf = z.string().optional().describe('A whole PYTORCH_CUDA_ALLOC_CONF string replacing the recorded one, e.g. expandable_segments:True');
const capacity = z.string().optional().describe('A memory cap as set_per_process_memory_fraction sets it: bytes, 6GiB, 80GB, or none (default: the cap a recorded OOM shows)');

/** A tool's answer: its JSON as text; any error thrown, a tool error with its message. */
async function answer(work: () => Promise<unknown> | unknown) {
  try {
    const value = await work();
    return { content: [{ type: 'text' as const, text: JSON.stringify(value) }] };
  } catch (e) {
    return { isError: true, content: [{ type: 'text' as const, text: (e as Error).message ?? String(e) }] };
  }
}

const cap = (text: string | undefined) => (text === undefined ? {} : { capacity: capacityOption(text) ?? null });

export function mcpServer(): McpServer {
  const server = new McpServer({ name: 'splitscope', version: VERSION });

  server.registerTool(
    'summarize',
    {
      description: 'A snapshot in brief, as recorded: requests, config, cap, peaks, OOMs, what the memory was at the peak, how much of the run it covers.',
      inputSchema: { file },
    },
    ({ file: path }) =>
      answer(async () => {
        const { snapshot, traces } = await load(path);
        const run = replaySnapshot(snapshot, { ...(traces[0] ? { trace: traces[0] } : {}), statsOnly: true });
        const totals = categoryTotals(run.stream, categorize(run.stream, traces[0]?.details), run.result.ooms[0]?.request ?? run.stream.length - 1);
        return {
          file: basename(path),
          devices: traces.length,
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
      }),
  );

  server.registerTool(
    'replay',
    {
      description: 'Replays a snapshot under a config and cap with the allocator model: memory_stats() names, each OOM (request, message, why), and the categories of memory (as splitscope replay --json).',
      inputSchema: { file, conf, capacity },
    },
    ({ file: path, conf: c, capacity: x }) =>
      answer(async () => {
        const { snapshot, traces } = await load(path);
        const run = replaySnapshot(snapshot, { ...(traces[0] ? { trace: traces[0] } : {}), statsOnly: true, ...(c !== undefined ? { conf: c } : {}), ...cap(x) });
        return { stats: run.result.stats, ooms: oomsOf(run.result), caught_ooms: caughtOomsOf(run.result), categories: categoriesJson(run.stream, traces[0]?.details, run.result).json, notes: run.notes };
      }),
  );

  server.registerTool(
    'sweep',
    {
      description: 'Replays a snapshot at several max_split_size_mb values (as splitscope sweep --max-split --json): peaks, first OOM, retries, cudaMalloc churn, fragmentation at the peak.',
      inputSchema: { file, max_split: z.string().default('20,64,128,256,512,none').describe('max_split_size_mb values, comma-separated; none for unlimited'), capacity },
    },
    ({ file: path, max_split: values, capacity: x }) =>
      answer(async () => {
        const settings = parseMaxSplitList(values);
        const { snapshot, traces } = await load(path);
        const { stream } = replaySnapshot(snapshot, { statsOnly: true, until: -1, ...(traces[0] ? { trace: traces[0] } : {}) });
        return sweepMaxSplit(snapshot, settings, { stream, ...cap(x) });
      }),
  );

  server.registerTool(
    'explain',
    {
      description:
        "The story of a snapshot's OOM (or its peak), as splitscope explain --json: memory by category (parameters, gradients, optimizer state, activations, ...), reserved but unallocated and where, steps, suspected leaks, and fixes each checked by replay (settings, empty_cache, freeing a site earlier).",
      inputSchema: { file, conf, capacity },
    },
    ({ file: path, conf: c, capacity: x }) =>
      answer(async () => {
        const loaded = await load(path);
        const { json, notes } = explainAnswer(loaded, { ...(c !== undefined ? { conf: c } : {}), capacity: x === undefined ? undefined : (capacityOption(x) ?? null) });
        return { ...json, notes };
      }),
  );

  server.registerTool(
    'compare',
    {
      description:
        'Compares two recordings of one job (before and after a change) under one config and cap, as splitscope check --json: what grew (peaks, categories, sites, churn) and, with limits, whether each holds.',
      inputSchema: {
        baseline: file,
        new: file,
        conf,
        capacity,
        max_peak_reserved: z.string().optional().describe('Growth allowed of peak reserved memory, e.g. +5% or +512MiB'),
        max_peak_allocated: z.string().optional().describe('Growth allowed of peak allocated memory'),
        category: z.array(z.string()).optional().describe('Growth allowed of a category, e.g. activation:+10%'),
        no_new_oom: z.boolean().optional().describe('Fail when the new run runs out of memory and the baseline did not'),
      },
    },
    (a) =>
      answer(async () => {
        const limits: Limit[] = [];
        if (a.max_peak_reserved !== undefined) limits.push({ figure: 'peak_reserved', growth: parseGrowth(a.max_peak_reserved, 'max_peak_reserved') });
        if (a.max_peak_allocated !== undefined) limits.push({ figure: 'peak_allocated', growth: parseGrowth(a.max_peak_allocated, 'max_peak_allocated') });
        for (const c of a.category ?? []) limits.push(parseCategoryLimit(c));
        if (a.no_new_oom) limits.push({ figure: 'no_new_oom' });
        const [x, y] = await Promise.all([load(a.baseline), load(a.new)]);
        const rec = (path: string, l: SnapshotForReplay) => ({ name: basename(path), snapshot: l.snapshot, ...(l.traces[0] ? { trace: l.traces[0] } : {}) });
        return checkJson(checkRecordings(rec(a.baseline, x!), rec(a.new, y!), limits, { ...(a.conf !== undefined ? { conf: a.conf } : {}), ...cap(a.capacity) }));
      }),
  );

  server.registerTool(
    'predict',
    {
      description:
        'Predicts the program at another size (batch or sequence length) from its recordings at two sizes or more, as splitscope predict --json: the predicted run replayed (stats, OOMs, which cards it fits) at `at`, or with `fit` the largest size that fits the capacity under each config. Near the cap a size is judged under several address layouts, by most (where the CUDA driver puts the segments can decide it): `address_layouts`, and `largest_split` / `first_failing_split` where they split.',
      inputSchema: {
        recordings: z.array(z.object({ size: z.number().positive(), file })).min(2).describe('The same script recorded at two sizes or more, each with the size it ran at'),
        at: z.number().positive().optional().describe('The size to predict'),
        fit: z.boolean().optional().describe('Find the largest size that fits `capacity` instead'),
        conf: z.array(z.string()).optional().describe('PYTORCH_CUDA_ALLOC_CONF strings: one for `at`; for `fit`, each side by side'),
        capacity,
      },
    },
    (a) =>
      answer(async () => {
        const result = await predictAnswer(
          a.recordings,
          {
            ...(a.at !== undefined ? { at: String(a.at) } : {}),
            ...(a.fit ? { fit: true } : {}),
            ...(a.conf ? { conf: a.conf } : {}),
            ...(a.capacity !== undefined ? { capacity: a.capacity } : {}),
          },
          async (files) => {
            const out: PlannedRecording[] = [];
            for (const f of files) out.push(plannedRecording(await load(f)));
            return out;
          },
        );
        return result.kind === 'at' ? { ...result.json, notes: result.notes } : result.json;
      }),
  );

  server.registerTool(
    'report',
    {
      description: 'Writes one self-contained HTML file, the splitscope page with the snapshot inside, that opens offline in Chrome with every view (for a bug report or a colleague).',
      inputSchema: { file, out: z.string().optional().describe('Where to write it (default: FILE.report.html in the current folder)'), conf },
    },
    ({ file: path, out, conf: c }) =>
      answer(() => {
        const { target, bytes } = writeReport(path, out, c);
        return { path: target, bytes };
      }),
  );

  return server;
}

/** Serves the tools on stdin/stdout until the client goes. */
export async function serveMcp(): Promise<number> {
  const server = mcpServer();
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.on('end', resolve);
  });
  return 0;
}
