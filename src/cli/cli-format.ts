// What the CLI's commands print alike: memory_stats() as a table, a replay's notes, and the error a
// mistake on the command line gets.
import { categorize, categoryRecord, categoryTotals } from '../trace/categories/categories';
import type { TraceDetails } from '../trace/snapshot/trace-columns';
import type { RequestStream } from '../trace/stream/request-stream';
import { parseByteSize } from '../allocator/byte-size';
import type { Capacity } from '../allocator/capacity';
import { formatSize } from '../allocator/format-size';
import { fragmentation } from '../trace/measures/fragmentation';
import type { ReplayResult } from '../trace/replay/replay';

/** A mistake on the command line: exit 2 with the message and a pointer to the usage. */
export class UsageError extends Error {}

/** memory_stats() names and values, the pools' own rows left out, bytes also as PyTorch prints them. */
export function statsTable(stats: Record<string, number>): string {
  const keys = Object.keys(stats).filter((k) => !k.includes('.small_pool.') && !k.includes('.large_pool.'));
  const width = Math.max(...keys.map((k) => k.length));
  return keys
    .map((k) => {
      const v = stats[k]!;
      const pretty = k.includes('bytes') || k === 'max_split_size' ? (v >= 0 ? `  (${formatSize(v)})` : '') : '';
      return `  ${k.padEnd(width)}  ${String(v).padStart(14)}${pretty}`;
    })
    .join('\n');
}

/** A replay's note as the CLI prints it: what contradicts the rest of the file is a warning. */
export const noteLine = (note: string): string => (note.startsWith('Inconsistent trace:') ? `warning: ${note}` : `note: ${note}`);

/** --capacity as given: absent (undefined: the cap a recorded OOM shows, if any), 'none' (null), or a size. */
export function capacityOption(text: string | undefined): Capacity | null | undefined {
  if (text === undefined) return undefined;
  return text.trim().toLowerCase() === 'none' ? null : { kind: 'fraction', bytes: parseByteSize(text) };
}

/** A replay's OOMs as `--json` writes them. */
export function oomsOf(result: ReplayResult): { request: number; size: number; message: string; why: string[] }[] {
  return result.ooms.map((o) => ({ request: o.request, size: o.size, message: o.message, why: o.why }));
}

/** The OOMs PyTorch caught (cuDNN workspaces: the program went on), as `--json` writes them beside `ooms`. */
export function caughtOomsOf(result: ReplayResult): { request: number; size: number }[] {
  return result.caught.map((o) => ({ request: o.request, size: o.size }));
}

/** What `replay` prints after its header, for any replay: notes, OOMs with why, memory_stats(), the fragmentation at the end. */
export function printReplay(result: ReplayResult, notes: readonly string[]): void {
  for (const note of notes) console.log(noteLine(note));
  for (const o of result.ooms) {
    console.log(`OOM at request ${o.request} (${o.size} bytes): ${o.message}`);
    for (const line of o.why) console.log(`  why: ${line}`);
  }
  console.log(statsTable(result.stats));
  const f = fragmentation(result.allocator);
  console.log(
    `at the end: reserved - allocated ${formatSize(f.reservedMinusAllocated)}, inactive split ${formatSize(f.inactiveSplit)}, ` +
      `largest free block ${formatSize(f.largestFreeBlock)}, external fragmentation ${(f.externalRatio * 100).toFixed(1)}%`,
  );
}

/** replay --json's and stats --json's "categories": requested bytes by category at the peak of live
 * requested bytes, at the end (an OOM's request, where the run failed), and each one's largest. */
export function categoriesJson(stream: RequestStream, details: TraceDetails | undefined, result: ReplayResult) {
  const totals = categoryTotals(stream, categorize(stream, details), result.ooms[0]?.request ?? stream.length - 1);
  return { totals, json: { at_peak: categoryRecord(totals.atPeak), at_end: categoryRecord(totals.atEnd), max: categoryRecord(totals.max), peak_request: totals.peakRequest } };
}
