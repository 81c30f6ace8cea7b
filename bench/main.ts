// npm run bench: figures and ratios, never pass/fail (performance goals live here, not in tests).
import { benchCli } from './cli.bench';
import { benchGpu } from './gpu.bench';
import { benchPageLatency } from './page-latency.bench';
import { benchPageOpen } from './page-open.bench';
import { benchImport } from './import.bench';
import { benchReplay } from './replay.bench';
import { benchSeek } from './seek.bench';
import { benchSegmentMap } from './segment-map.bench';

console.log(`splitscope benchmarks: node ${process.version}, ${process.platform}/${process.arch}`);
benchReplay();
benchSeek();
benchImport();
benchCli();
await benchGpu();
await benchPageOpen();
await benchPageLatency();
await benchSegmentMap();
