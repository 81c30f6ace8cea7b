// Import throughput: snapshot bytes -> validated Snapshot (gunzip, unpickle, shape checks), in MB/s of
// pickle; and a 100 MB pickle made locally by bench/make-big-pickle.py (never committed).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'fflate';
import { decodeSnapshotFile } from '../src/trace/snapshot/snapshot-file';
import { best, fixture, report, ROOT } from './harness';

function measure(title: string, bytes: Uint8Array, pickleBytes: number): void {
  const seconds = best(3, () => decodeSnapshotFile(bytes));
  report(title, {
    'input (MB)': +(bytes.length / 1e6).toFixed(1),
    'pickle (MB)': +(pickleBytes / 1e6).toFixed(1),
    'best of 3 (s)': +seconds.toFixed(3),
    'pickle MB/s': +(pickleBytes / 1e6 / seconds).toFixed(0),
  });
}

export function benchImport(): void {
  for (const file of ['random-s3__default.pickle.gz', 'train_gpt2-n150__default.pickle.gz']) {
    const gz = readFileSync(fixture(file));
    const raw = gunzipSync(gz);
    measure(`import ${file} (gzip)`, gz, raw.length);
    measure(`import ${file} (uncompressed)`, raw, raw.length);
  }
  const big = join(ROOT, 'bench/out/big-100mb.pickle');
  if (!existsSync(big)) {
    mkdirSync(join(ROOT, 'bench/out'), { recursive: true });
    const made = spawnSync('python3', [join(ROOT, 'bench/make-big-pickle.py'), '--mb', '100', big], { stdio: 'inherit' });
    if (made.status !== 0) {
      console.log('\nimport 100 MB pickle: skipped (python3 could not make it)');
      return;
    }
  }
  const bytes = readFileSync(big);
  const cold = best(1, () => decodeSnapshotFile(bytes));
  measure('import a 100 MB pickle (bench/make-big-pickle.py)', bytes, bytes.length);
  report('goal: a 100 MB pickle in under 2 s (first, cold run)', {
    seconds: +cold.toFixed(3),
    result: cold < 2 ? 'met' : 'NOT met',
    'peak RSS of this process so far (MB)': +(process.resourceUsage().maxRSS / 1024).toFixed(0),
  });
}
