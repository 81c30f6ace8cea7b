// A fleet's batch in a few lines: of the files that ran out of memory as recorded, how many each config
// would have saved (no OOM through the recorded requests), and which are not fragmentation at all: no
// config saves them and reserved but unallocated memory at the OOM was small, so the memory was in use.
import { grouped } from '../../lib/grouped';
import type { BatchRow, BatchRowOk } from './batch-rows';

/** Below this share of reserved memory unallocated at the OOM, the OOM is not fragmentation. */
export const IN_USE_SHARE = 0.05;

/** What `batch-summary --json` prints, keys in snake_case as the rows' are. */
export interface BatchSummary {
  files: number;
  unreadable: { file: string; error: string }[];
  /** Files that ran out of memory as recorded (their recording ends at, or holds, an OOM). */
  recorded_ooms: number;
  by_conf: { conf: string | null; rows: number; ooms: number; avoided: number }[];
  /** Of the recorded OOMs, those no config avoids ... */
  unsaved: number;
  /** ... and of those, the ones with little reserved but unallocated memory at the OOM: not fragmentation. */
  not_fragmentation: string[];
  /** Files whose rows carry the replay's "Inconsistent trace" warnings (the recording contradicts itself). */
  inconsistent: string[];
}

export function batchSummary(rows: readonly BatchRow[]): BatchSummary {
  const byFile = new Map<string, BatchRow[]>();
  for (const r of rows) {
    let list = byFile.get(r.file);
    if (!list) byFile.set(r.file, (list = []));
    list.push(r);
  }
  const confs = [...new Set(rows.map((r) => r.conf))];
  const unreadable: BatchSummary['unreadable'] = [];
  const oomFiles: BatchRowOk[][] = [];
  for (const [file, list] of byFile) {
    const ok = list.filter((r): r is BatchRowOk => r.ok);
    if (ok.length === 0) {
      const first = list[0] as { error: string };
      unreadable.push({ file, error: first.error });
      continue;
    }
    if (ok[0]!.recorded_oom_request !== null) oomFiles.push(ok);
  }
  const byConf = confs.map((conf) => {
    const of = rows.filter((r): r is BatchRowOk => r.ok && r.conf === conf);
    const avoided = oomFiles.filter((list) => list.some((r) => r.conf === conf && r.first_oom_request === null)).length;
    return { conf, rows: of.length, ooms: of.filter((r) => r.first_oom_request !== null).length, avoided };
  });
  const unsavedFiles = oomFiles.filter((list) => list.every((r) => r.first_oom_request !== null));
  const notFragmentation = unsavedFiles
    .filter((list) => {
      const r = list.find((x) => x.conf === null) ?? list[0]!;
      return r.reserved_at_oom !== null && r.reserved_minus_allocated_at_oom! < IN_USE_SHARE * r.reserved_at_oom;
    })
    .map((list) => list[0]!.file);
  const inconsistent = [...byFile].filter(([, list]) => list.some((r) => r.ok && (r.notes?.length ?? 0) > 0)).map(([file]) => file);
  return { files: byFile.size, unreadable, recorded_ooms: oomFiles.length, by_conf: byConf, unsaved: unsavedFiles.length, not_fragmentation: notFragmentation, inconsistent };
}

const pct = (n: number, of: number): string => (of > 0 ? `${((n / of) * 100).toFixed(1)}%` : '–');

export function batchSummaryText(s: BatchSummary): string {
  const lines = [`${grouped(s.files)} files, ${grouped(s.files - s.unreadable.length)} read${s.unreadable.length ? ` (${grouped(s.unreadable.length)} could not be)` : ''}.`];
  if (s.recorded_ooms === 0) lines.push('None of them ran out of memory as recorded.');
  else {
    lines.push(`Of ${grouped(s.recorded_ooms)} OOMs (files that ran out of memory as recorded), as far as each recording reaches:`);
    const name = (c: string | null): string => (c === null ? 'as recorded' : c || '(defaults)');
    const width = Math.max(...s.by_conf.map((c) => name(c.conf).length));
    for (const c of s.by_conf) lines.push(`  ${name(c.conf).padEnd(width)}  ${pct(c.avoided, s.recorded_ooms).padStart(6)} avoided (${grouped(c.avoided)})`);
    lines.push(
      `  none of these configs avoids ${grouped(s.unsaved)} (${pct(s.unsaved, s.recorded_ooms)}); of those, ${grouped(s.not_fragmentation.length)} had less than ` +
        `${IN_USE_SHARE * 100}% of reserved memory unallocated at the OOM: not fragmentation, the memory was in use (a smaller batch, activation checkpointing, a larger card).`,
    );
  }
  if (s.inconsistent.length > 0) {
    const n = s.inconsistent.length;
    lines.push(
      `${grouped(n)} ${n === 1 ? 'recording contradicts itself' : 'recordings contradict themselves'} (a free of memory no segment held, an allocation made twice): ` +
        `${n === 1 ? 'its' : 'their'} rows' notes say where (${s.inconsistent[0]}${n > 1 ? ', ...' : ''}).`,
    );
  }
  for (const u of s.unreadable.slice(0, 10)) lines.push(`could not read ${u.file}: ${u.error}`);
  return lines.join('\n');
}
