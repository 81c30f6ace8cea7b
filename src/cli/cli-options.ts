// The CLI's commands and options, as node:util parseArgs reads them: one table for the early read
// (early-read.ts), which needs FILE before the rest of the CLI has loaded, and for main.ts.
import type { ParseArgsConfig } from 'node:util';

export const COMMANDS = ['replay', 'sweep', 'stats', 'open', 'report', 'predict', 'explain', 'check', 'mcp', 'batch', 'batch-summary'] as const;

export const OPTIONS = {
  // Several for predict --fit (the configs side by side) and batch; every other command takes one.
  conf: { type: 'string', multiple: true },
  capacity: { type: 'string' },
  addresses: { type: 'string' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean', default: false },
  'max-split': { type: 'string' },
  param: { type: 'string' },
  values: { type: 'string' },
  'empty-cache-at': { type: 'string' },
  'reset-peak-at': { type: 'string' },
  until: { type: 'string' },
  at: { type: 'string' },
  fit: { type: 'boolean', default: false },
  // check's limits and reports.
  'max-peak-reserved': { type: 'string' },
  'max-peak-allocated': { type: 'string' },
  category: { type: 'string', multiple: true },
  'no-new-oom': { type: 'boolean', default: false },
  junit: { type: 'string' },
  markdown: { type: 'string' },
  // batch's.
  workers: { type: 'string' },
  shard: { type: 'string' },
  device: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'allow-remote': { type: 'boolean', default: false },
  // Replace an --out file that exists (report, replay, predict).
  force: { type: 'boolean', default: false },
  // mcp's.
  'out-dir': { type: 'string' },
  'call-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** A size's unit given as a word of its own after --capacity's number ("--capacity 6 GB"). */
const UNIT = /^(b|[kmgt]i?b)$/i;

/**
 * The command line with "--capacity 6 GB" read as "--capacity 6GB": a shell splits the value there,
 * and the unit would otherwise be taken for a second FILE.
 */
export function joinSizeUnits(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const inline = /^--capacity=(\d[\d.e+]*)$/i.exec(arg);
    if (inline && UNIT.test(argv[i + 1] ?? '')) {
      out.push(`${arg}${argv[++i]}`);
    } else if (arg === '--capacity' && /^\d[\d.e+]*$/i.test(argv[i + 1] ?? '') && UNIT.test(argv[i + 2] ?? '')) {
      out.push(arg, `${argv[i + 1]}${argv[i + 2]}`);
      i += 2;
    } else out.push(arg);
  }
  return out;
}
