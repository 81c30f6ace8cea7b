// splitscope check BASELINE NEW [limits] [--conf C] [--capacity X] [--json] [--junit FILE] [--markdown FILE]:
// a memory regression gate for CI (trace/check). Exits 1 when a limit is broken, saying which; with
// GITHUB_ACTIONS set, each broken limit is also an ::error:: annotation.
import { basename } from 'node:path';
import type { Capacity } from '../allocator/capacity';
import { ConfigError } from '../allocator/config-error';
import { checkRecordings } from '../trace/check/check';
import { parseCategoryLimit, parseGrowth, type Limit } from '../trace/check/check-limits';
import { checkAnnotations, checkJson, checkJunit, checkMarkdown, checkText } from '../trace/check/check-report';
import type { SnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { UsageError } from './cli-format';
import { checkOutput, writeOutput } from './output-file';

export interface CheckCliOptions {
  conf?: string;
  capacity: Capacity | null | undefined;
  json?: boolean;
  junit?: string;
  markdown?: string;
  'max-peak-reserved'?: string;
  'max-peak-allocated'?: string;
  category?: string[];
  'no-new-oom'?: boolean;
}

export async function checkCommand(files: readonly string[], options: CheckCliOptions, load: (file: string, details: boolean) => Promise<SnapshotForReplay>): Promise<number> {
  if (files.length !== 2) throw new UsageError('check takes two files: BASELINE NEW (the same job before and after a change)');
  const limits: Limit[] = [];
  // A limit typed wrong is a usage error (exit 2), not a broken limit (exit 1).
  try {
    if (options['max-peak-reserved'] !== undefined) limits.push({ figure: 'peak_reserved', growth: parseGrowth(options['max-peak-reserved'], '--max-peak-reserved') });
    if (options['max-peak-allocated'] !== undefined) limits.push({ figure: 'peak_allocated', growth: parseGrowth(options['max-peak-allocated'], '--max-peak-allocated') });
    for (const c of options.category ?? []) limits.push(parseCategoryLimit(c));
  } catch (e) {
    throw e instanceof ConfigError ? new UsageError(e.message) : e;
  }
  if (options['no-new-oom']) limits.push({ figure: 'no_new_oom' });
  // CI artifacts, made anew each run: replaced, but never an input, and a path that cannot be written
  // is said before the replays, not after them.
  const output = { overwrite: true, inputs: files };
  for (const path of [options.junit, options.markdown]) if (path !== undefined) checkOutput(path, output);
  const [a, b] = await Promise.all(files.map(async (file) => ({ file, ...(await load(file, true)) })));
  const recording = (r: typeof a) => ({ name: basename(r!.file), snapshot: r!.snapshot, ...(r!.traces[0] ? { trace: r!.traces[0] } : {}) });
  const result = checkRecordings(recording(a), recording(b), limits, {
    ...(options.conf !== undefined ? { conf: options.conf } : {}),
    ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
  });
  if (options.junit !== undefined) writeOutput(options.junit, checkJunit(result), output);
  if (options.markdown !== undefined) writeOutput(options.markdown, checkMarkdown(result), output);
  if (options.json) console.log(JSON.stringify(checkJson(result)));
  else console.log(checkText(result));
  // With --json, stdout is one JSON object (jq, json.load): the annotations go to stderr, which the
  // Actions runner reads for workflow commands as it reads stdout.
  if (process.env['GITHUB_ACTIONS'] === 'true') for (const line of checkAnnotations(result)) (options.json ? console.error : console.log)(line);
  return result.passed ? 0 : 1;
}
