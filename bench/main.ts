// npm run bench: figures and ratios, never pass/fail (performance goals live here, not in tests).
import { benchBadInputs } from './bad-inputs.bench';
import { benchBatch } from './batch.bench';
import { benchCli } from './cli.bench';
import { benchGpu } from './gpu.bench';
import { benchPageLatency } from './page-latency.bench';
import { benchPageOpen } from './page-open.bench';
import { benchPredict } from './predict.bench';
import { benchImport } from './import.bench';
import { benchReplay, replayChild } from './replay.bench';
import { benchSeek } from './seek.bench';
import { benchSegmentMap } from './segment-map.bench';
import { benchViews } from './views.bench';

const BENCHES: [string, () => unknown][] = [
  ['replay', benchReplay],
  ['seek', benchSeek],
  ['import', benchImport],
  ['cli', benchCli],
  ['predict', benchPredict],
  ['batch', benchBatch],
  ['bad-inputs', benchBadInputs],
  ['gpu', benchGpu],
  ['page-open', benchPageOpen],
  ['page-latency', benchPageLatency],
  ['segment-map', benchSegmentMap],
  ['views', benchViews],
];

// The replay bench's child process: one trace's figure, in a process that replays nothing else.
if (process.argv[2] === '--replay-child') {
  replayChild(process.argv[3]!);
  process.exit(0);
}

// `npm run bench -- seek cli` runs only those (names as above); no names runs all.
const asked = process.argv.slice(2);
const unknown = asked.filter((a) => !BENCHES.some(([name]) => name === a));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}; the benchmarks are ${BENCHES.map(([n]) => n).join(', ')}`);
  process.exit(2);
}
console.log(`splitscope benchmarks: node ${process.version}, ${process.platform}/${process.arch}`);
for (const [name, bench] of BENCHES) if (asked.length === 0 || asked.includes(name)) await bench();
