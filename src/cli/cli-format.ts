// What the CLI's commands print alike: memory_stats() as a table, a replay's notes, and the error a
// mistake on the command line gets.
import { parseByteSize } from '../allocator/byte-size';
import type { Capacity } from '../allocator/capacity';
import { formatSize } from '../allocator/format-size';

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
