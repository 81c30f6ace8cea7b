// The held-out framework programs (tests/fixtures/frameworks, recorded on the device by
// scripts/device/record-frameworks.py), as the size prediction reads them: per program and recording
// mode, its recordings at six sizes, smallest first.
import { readFileSync } from 'node:fs';
import { nodeGunzip } from '../../src/cli/node-gunzip';
import { allocationStacks } from '../../src/trace/measures/allocation-stacks';
import type { SizedRecording } from '../../src/trace/predict/predict-stream';
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

const entries = (root: string): Entry[] => JSON.parse(readFileSync(`${root}/${FRAMEWORKS_DIR}/MANIFEST.json`, 'utf8')).traces;

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
