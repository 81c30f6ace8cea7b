// The held-out framework programs (tests/fixtures/frameworks, recorded on the device by
// scripts/device/record-frameworks.py), as the size prediction reads them: per program and recording
// mode, its recordings at six sizes, smallest first.
import { readFileSync } from 'node:fs';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { predictAnswer } from '../../src/cli/predict';
import { plannedRecording } from '../../src/cli/recording-worker';
import { bandAnswer } from '../../src/trace/predict/size-fit';
import { allocationStacks } from '../../src/trace/measures/allocation-stacks';
import { SizePredictor, type SizedRecording } from '../../src/trace/predict/predict-stream';
import type { Capacity } from '../../src/allocator/capacity';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { replay } from '../../src/trace/replay/replay';
import { programRequest } from './size-recordings';
import { planSnapshotReplay } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';

export const FRAMEWORKS_DIR = 'tests/fixtures/frameworks';
export const FRAMEWORK_MODES = ['python', 'default'] as const;

interface Entry {
  file: string;
  program?: string;
  size: number;
  mode: string;
  cap?: number | null;
  truth?: unknown;
}

const manifests = new Map<string, Entry[]>();
/** The manifest's entries, read once per root. */
const entries = (root: string): Entry[] => {
  let out = manifests.get(root);
  if (!out) manifests.set(root, (out = JSON.parse(readFileSync(`${root}/${FRAMEWORKS_DIR}/MANIFEST.json`, 'utf8')).traces as Entry[]));
  return out;
};

/** The programs, in the manifest's order. */
export function frameworkPrograms(root = '.'): string[] {
  return [...new Set(entries(root).filter((e) => e.truth && !e.cap).map((e) => e.program!))];
}

/** One program's uncapped recordings in one mode, by size. */
export function frameworkRecordings(program: string, mode: string, root = '.'): SizedRecording[] {
  return entries(root)
    .filter((e) => e.program === program && e.mode === mode && e.truth && !e.cap)
    .sort((a, b) => a.size - b.size)
    .map((e) => {
      const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(`${root}/${FRAMEWORKS_DIR}/${e.file}`), { gunzip: nodeGunzip, details: true });
      const { stream } = planSnapshotReplay(snapshot, { trace: traces[0]! });
      return { name: e.file, size: e.size, stream, stacks: allocationStacks(stream, traces[0]!.details, snapshot) };
    });
}

/** One --fit on a held-out program: predicted from its 2nd and 4th uncapped sizes under the cap its
 * phase-2 runs ran under; the real largest size that fit, bracketed by the sizes tried. */
export interface FrameworkFit {
  program: string;
  mode: string;
  cap: number;
  /** --fit's answer and the sizes its band names (the largest, and the next where within the band). */
  predicted: number | null;
  named: number[];
  /** The sizes the answer names, smallest and largest: its band's range, else the largest and the next. */
  range: [number, number];
  answer: string;
  /** The largest tried size that fit, and the first tried size above it that did not (null: none did not). */
  real: number;
  realFails: number | null;
}

export async function frameworkFits(root = '.'): Promise<FrameworkFit[]> {
  const m = JSON.parse(readFileSync(`${root}/${FRAMEWORKS_DIR}/MANIFEST.json`, 'utf8'));
  const probes: { program: string; size: number; cap: number; fits: boolean }[] = m.fits ?? [];
  const out: FrameworkFit[] = [];
  for (const program of frameworkPrograms(root)) {
    const tried = probes.filter((p) => p.program === program);
    if (tried.length === 0) continue;
    const asked = tried[0]!.cap;
    const real = Math.max(...tried.filter((p) => p.fits).map((p) => p.size));
    const above = tried.filter((p) => !p.fits && p.size > real).map((p) => p.size);
    const total = (entries(root).find((e) => e.program === program && e.cap) as { device_total?: number } | undefined)?.device_total ?? asked;
    const cap = Math.trunc((asked / total) * total);
    for (const mode of FRAMEWORK_MODES) {
      const runs = entries(root).filter((e) => e.program === program && e.mode === mode && e.truth && !e.cap).sort((a, b) => a.size - b.size);
      const inputs = [runs[1]!, runs[3]!].map((e) => ({ size: e.size, file: e.file }));
      const answer = await predictAnswer(inputs, { fit: true, capacity: String(cap), conf: [''] }, async (files) =>
        files.map((file) => plannedRecording(decodeSnapshotForReplay(readFileSync(`${root}/${FRAMEWORKS_DIR}/${file}`), { gunzip: nodeGunzip, details: true }))),
      );
      if (answer.kind !== 'fit') throw new Error('predict --fit answered something else');
      const f = answer.fits[0]!;
      const text = f.largest === null ? 'none' : `${f.largest}${bandAnswer(f, cap)}`;
      const named = [f.largest, ...(text.includes(', or ') && f.firstFailing !== null ? [f.firstFailing] : [])].filter((s): s is number => s !== null);
      const range: [number, number] = f.bandRange ?? [Math.min(...named), Math.max(...named)];
      out.push({ program, mode, cap, predicted: f.largest, named, range, answer: text, real, realFails: above.length ? Math.min(...above) : null });
    }
  }
  return out;
}

/** Each held-out program's phase-2 run at one size under its cap, beside the prediction at that size
 * (from the 2nd and 4th uncapped sizes, same mode) replayed under the same cap: the first OOM the program
 * saw in each (the request, counted without the OOMs PyTorch caught), or null where it ran through. */
export interface FrameworkCapRow {
  program: string;
  mode: string;
  size: number;
  cap: number;
  real: number | null;
  predicted: number | null;
  requests: number;
}

export function frameworkCapRows(root = '.'): FrameworkCapRow[] {
  const rows: FrameworkCapRow[] = [];
  const config = parseAllocConf('').config;
  for (const program of frameworkPrograms(root)) {
    for (const mode of FRAMEWORK_MODES) {
      const all = frameworkRecordings(program, mode, root);
      const predictor = new SizePredictor([all[1]!, all[3]!]);
      for (const e of entries(root).filter((x) => x.program === program && x.mode === mode && x.cap)) {
        const capacity: Capacity = { kind: 'fraction', bytes: (e as unknown as { allowed_memory_maximum: number }).allowed_memory_maximum };
        const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(`${root}/${FRAMEWORKS_DIR}/${e.file}`), { gunzip: nodeGunzip });
        const recording = planSnapshotReplay(snapshot, { trace: traces[0]! }).stream;
        const recorded = recording.recordedOoms[0];
        const caughtInRecording = new Set([...recording.failedInRecording].filter((id) => recording.cudnnWorkspaces.has(id)));
        const stream = predictor.at(e.size).stream;
        const { ooms, caught } = replay(stream, { config, addresses: 'simulated', capacity, statsOnly: true, untilOom: true });
        rows.push({
          program,
          mode,
          size: e.size,
          cap: capacity.bytes,
          real: recorded === undefined ? null : programRequest(recording, recorded, caughtInRecording),
          predicted: ooms[0] ? programRequest(stream, ooms[0].request, new Set(caught.map((o) => stream.id[o.request]!))) : null,
          requests: stream.length,
        });
      }
    }
  }
  return rows;
}
