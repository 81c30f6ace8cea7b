// The reference traces in tests/fixtures (real PyTorch 2.11 snapshots from an H200) and their manifests:
// MANIFEST.json for the lab traces (torch.empty/del sequences, GPT-2 training), real/MANIFEST.json for
// real-library programs (torchvision, transformers, torch.compile, CUDA graphs, an OOM dump, ...).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Capacity } from '../../src/allocator/capacity';
import type { Snapshot } from '../../src/trace/snapshot/snapshot';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';

export const FIXTURES = join(__dirname, '../fixtures');

export interface ManifestTrace {
  file: string;
  workload: string;
  seed?: number;
  conf: string;
  allowed_memory_maximum?: number | null;
  device_total: number | null;
  requests?: number | null;
  ooms: number | null;
  trace_events: number;
  stats_at_end: Record<string, number>;
  /** Traces recorded by scripts/device/record-all.sh: the requests of another trace, replayed ... */
  source?: string;
  /** ... with torch.cuda.empty_cache() after these request indices, */
  empty_cache_after?: number[];
  /** ... over this many streams (request ids alternate), */
  streams?: number;
  /** ... or with a second trace's requests on cuda:1 (and its stats). */
  source1?: string | null;
  stats_at_end_device1?: Record<string, number>;
  /** Real programs: the history ring buffer dropped the start; or no history at all. */
  midrun?: boolean;
  segments_only?: boolean;
  no_history?: boolean;
  description?: string;
}

const manifest = (path: string): ManifestTrace[] => JSON.parse(readFileSync(join(FIXTURES, path), 'utf8')).traces;
export const MANIFEST: ManifestTrace[] = manifest('MANIFEST.json');
/** Real programs' snapshots, in tests/fixtures/real. */
export const REAL_MANIFEST: ManifestTrace[] = manifest('real/MANIFEST.json');
/** Real programs at several sizes, three configs and a cap (size prediction's ground truth), in tests/fixtures/sizes. */
export const SIZES_MANIFEST: ManifestTrace[] = manifest('sizes/MANIFEST.json');
/** Held-out programs of real frameworks at six sizes, both recording modes, and four allocator cases, in tests/fixtures/frameworks. */
export const FRAMEWORKS_MANIFEST: ManifestTrace[] = manifest('frameworks/MANIFEST.json');
/** Training programs that wrote what their memory is (tests/fixtures/categories), and one in micro-batches
 * recorded both ways (tests/fixtures/microbatch). */
export const CATEGORIES_MANIFEST: ManifestTrace[] = manifest('categories/MANIFEST.json');
export const MICROBATCH_MANIFEST: ManifestTrace[] = manifest('microbatch/MANIFEST.json');

export function loadTrace(file: string): Snapshot {
  return decodeSnapshotFile(readFileSync(join(FIXTURES, file)));
}

export function loadRealTrace(file: string): Snapshot {
  return loadTrace(join('real', file));
}

/** The cap the recording ran under (set_per_process_memory_fraction), if any. */
export function capacityOf(trace: ManifestTrace): Capacity | undefined {
  return trace.allowed_memory_maximum ? { kind: 'fraction', bytes: trace.allowed_memory_maximum } : undefined;
}
