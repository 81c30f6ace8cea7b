// splitscope report: one self-contained HTML file, the built page and the snapshot inside
// (gzip-compressed), that opens offline from disk with every view working (for a bug report).
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { isGzip } from '../lib/gzip-frame';
import { REPORT_SNAPSHOT_ID } from '../lib/launch-names';
import { decodeSnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { UsageError } from './cli-format';
import { nodeGunzip } from './node-gunzip';
import { checkOutput, writeOutput } from './output-file';
import { readBytes } from './read-file';

export interface ReportOptions {
  /** Replace `out` if it exists (--force; MCP's overwrite: true). */
  force?: boolean;
  /** How the refusal to replace names the way to ask. */
  forceWords?: string;
}

/** Writes the report of `file` (to `out`, default FILE.report.html here); its path and its size on disk. */
export function writeReport(file: string, out: string | undefined, conf: string | undefined, options: ReportOptions = {}): { target: string; bytes: number } {
  const template = fileURLToPath(new URL('../report/page.html', import.meta.url));
  if (!existsSync(template)) throw new UsageError('the report page is not built: run `npm run build:cli` (npm ci does it) and try again');
  if (conf !== undefined) parseAllocConf(conf);
  const target = out ?? `${basename(file).replace(/(\.pickle|\.pkl|\.json)?(\.gz)?$/i, '')}.report.html`;
  const output = { overwrite: options.force ?? false, inputs: [file], force: options.forceWords ?? '--force' };
  checkOutput(target, output);
  const bytes = readBytes(file);
  if (bytes.length > MAX_REPORT_BYTES) throw new UsageError(`${file} is ${formatSize(bytes.length)}: a report carries at most ${formatSize(MAX_REPORT_BYTES)}; use splitscope open for larger files`);
  // Refused here as the page would refuse it.
  decodeSnapshotForReplay(bytes, { gunzip: nodeGunzip });
  const packed = isGzip(bytes) ? bytes : gzipSync(bytes, { level: 9 });
  const name = basename(file);
  const attr = (v: string): string => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const element =
    `<script type="application/octet-stream" id="${REPORT_SNAPSHOT_ID}" data-name="${attr(name)}"` +
    `${conf !== undefined ? ` data-conf="${attr(conf)}"` : ''}>${Buffer.from(packed).toString('base64')}</script>`;
  const html = readFileSync(template, 'utf8').replace('__TITLE__', attr(name)).replace('__SNAPSHOT__', () => element);
  writeOutput(target, html, output);
  return { target, bytes: Buffer.byteLength(html) };
}

/** A report's snapshot travels as base64 inside the HTML: past this, the page would be slow to open. */
const MAX_REPORT_BYTES = 256 * 2 ** 20;
