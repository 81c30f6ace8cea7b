// The CLI's commands and options, as node:util parseArgs reads them: one table for the early read
// (early-read.ts), which needs FILE before the rest of the CLI has loaded, and for main.ts.
import type { ParseArgsConfig } from 'node:util';

export const COMMANDS = ['replay', 'sweep', 'stats', 'open', 'report'] as const;

export const OPTIONS = {
  conf: { type: 'string' },
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
  device: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;
