// The CLI's entry point (bin/splitscope.mjs loads its bundle): the snapshot starts being read and
// inflated (early-read.ts) before the rest of the CLI, a larger module, loads.
import { joinSizeUnits } from './cli-options';
import { readEarly } from './early-read';

// `splitscope replay F | head` closes the pipe before the output ends: stop quietly, as other tools do.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(0);
});

const argv = joinSizeUnits(process.argv.slice(2));
const early = readEarly(argv);
const { runCli } = await import('./main');
runCli(argv, early);
