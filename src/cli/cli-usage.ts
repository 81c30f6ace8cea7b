// Each command's usage and the options it takes: `splitscope CMD --help` prints its own, an option
// another command takes is refused by name (it would be ignored), and `splitscope --help` prints all.
import type { COMMANDS, OPTIONS } from './cli-options';

type Command = (typeof COMMANDS)[number];
type Option = keyof typeof OPTIONS;

interface CommandUsage {
  synopsis: string;
  /** What it does, a few lines. */
  about: string;
  options: readonly Option[];
}

/** Each option's line, as every command's help prints it. */
const OPTION_HELP: Record<Option, string> = {
  conf: '--conf STRING       a whole PYTORCH_CUDA_ALLOC_CONF string replacing the recorded one (default: the recorded config)',
  capacity: '--capacity SIZE     a memory cap as set_per_process_memory_fraction sets it: 6GiB, 80GB, bytes with a unit, or none\n                      (default: the cap a recorded OOM shows, else none)',
  addresses: '--addresses A       where segments land: recorded, or simulated (the driver model)\n                      (default: recorded under the recorded config, else simulated)',
  out: '-o, --out PATH      where to write (an existing file is replaced only with --force)',
  force: '--force             replace the --out file if it exists',
  json: '--json              one JSON object on stdout, notes and warnings on stderr',
  'max-split': '--max-split LIST    max_split_size_mb values, e.g. 20,64,128,512,none',
  param: '--param NAME        roundup_power2_divisions or garbage_collection_threshold',
  values: '--values LIST       the values of --param, comma-separated',
  'empty-cache-at': '--empty-cache-at N,...   run torch.cuda.empty_cache() after these request indices',
  'reset-peak-at': '--reset-peak-at N,...    run torch.cuda.reset_peak_memory_stats() after these request indices',
  until: '--until N           stop after this request index (0-based): the stats are those at that moment',
  at: '--at SIZE           the size to predict (a batch size, a sequence length)',
  fit: '--fit               the largest size whose predicted run fits --capacity, under each --conf',
  'max-peak-reserved': '--max-peak-reserved G   growth allowed of peak reserved memory: +5% or +512MiB',
  'max-peak-allocated': '--max-peak-allocated G  growth allowed of peak allocated memory: +3% or +256MiB',
  category: '--category C:G      growth allowed of a category, e.g. activation:+10% (repeatable)',
  'no-new-oom': '--no-new-oom        fail when the new run runs out of memory and the baseline did not',
  junit: '--junit PATH        write JUnit XML, one test case per limit (replaced if it exists)',
  markdown: '--markdown PATH     write a Markdown summary for a pull request (replaced if it exists)',
  workers: '--workers N         worker threads (default: up to 4)',
  shard: '--shard I/N         the I-th of N shares of the files, for a cluster (0 <= I < N)',
  device: '--device N          which GPU\'s trace, in a snapshot of several (default: 0)',
  port: '--port N            the port (default: any free one)',
  host: '--host ADDRESS      the address to listen on (default: 127.0.0.1)',
  'allow-remote': '--allow-remote      serve on an address other machines can reach (needed with a --host beyond loopback)',
  'out-dir': '--out-dir DIR       the only folder the tools write into (default: a new temporary folder)',
  'call-timeout': '--call-timeout S    seconds a tool call may run before it is stopped (default: 120)',
  help: '-h, --help          this help',
};

export const USAGES: Record<Command, CommandUsage> = {
  replay: {
    synopsis: 'splitscope replay FILE [--conf STRING] [--capacity SIZE] [--addresses recorded|simulated] [--device N]\n                        [--empty-cache-at N,...] [--reset-peak-at N,...] [--until N] [--out OUT.pickle|OUT.json[.gz] [--force]] [--json]',
    about: 'replays the snapshot through the allocator model: memory_stats(), each OOM and why, the categories at the peak',
    options: ['conf', 'capacity', 'addresses', 'device', 'empty-cache-at', 'reset-peak-at', 'until', 'out', 'force', 'json'],
  },
  sweep: {
    synopsis: 'splitscope sweep FILE --max-split 20,64,128,...,none [--capacity SIZE] [--json]\n  splitscope sweep FILE --param roundup_power2_divisions|garbage_collection_threshold --values V,... [--conf STRING] [--capacity SIZE] [--json]',
    about: 'replays the snapshot under each setting: peaks, first OOM, retries, cudaMalloc churn, fragmentation at the peak',
    options: ['max-split', 'param', 'values', 'conf', 'capacity', 'json'],
  },
  stats: {
    synopsis: 'splitscope stats FILE [--device N] [--conf STRING] [--capacity SIZE] [--json]',
    about: 'the final state: what python -m torch.cuda._memory_viz stats prints, segments by pool and stream,\n  free blocks by size, and the replay\'s memory_stats()',
    options: ['device', 'conf', 'capacity', 'json'],
  },
  report: {
    synopsis: 'splitscope report FILE [-o OUT.html [--force]] [--conf STRING]',
    about: 'writes one self-contained HTML file, the page and the snapshot inside, that opens offline from disk\n  with every view working (for a bug report); an existing file is replaced only with --force',
    options: ['out', 'force', 'conf'],
  },
  open: {
    synopsis: 'splitscope open FILE [--port N] [--host ADDRESS [--allow-remote]]',
    about: 'serves the page with FILE loaded and prints its URL, on loopback unless --allow-remote is given\n  (needs the built page: npm run build)',
    options: ['port', 'host', 'allow-remote'],
  },
  predict: {
    synopsis: 'splitscope predict SIZE:FILE SIZE:FILE [...] --at SIZE [--conf STRING] [--capacity SIZE] [--out OUT [--force]] [--json]\n  splitscope predict SIZE:FILE SIZE:FILE [...] --fit --capacity SIZE [--conf STRING]... [--json]',
    about: 'the program at another size (a batch, a sequence length) from its recordings at two sizes or more\n  (the same script under one config): its predicted run, replayed, and the memory it needs; or with\n  --fit the largest size whose predicted run fits the cap, under each --conf given',
    options: ['at', 'fit', 'conf', 'capacity', 'out', 'force', 'json'],
  },
  explain: {
    synopsis: 'splitscope explain FILE [--conf STRING] [--capacity SIZE] [--json]',
    about: 'the story of the run\'s OOM (or its peak): what the memory was, what was reserved but unallocated\n  and where, the steps, suspected leaks, and the fixes worth trying, each replayed',
    options: ['conf', 'capacity', 'json'],
  },
  check: {
    synopsis: 'splitscope check BASELINE NEW [--max-peak-reserved +5%] [--max-peak-allocated +3%] [--category activation:+10%]...\n                        [--no-new-oom] [--conf STRING] [--capacity SIZE] [--json] [--junit FILE] [--markdown FILE]',
    about: 'a memory regression gate: the same job before and after a change under one config and cap.\n  Exit 0: every limit held; 1: a limit broken; 2: a mistake on the command line or a file that cannot\n  be read. With GITHUB_ACTIONS=true (and not --json) each broken limit is also an ::error:: annotation',
    options: ['max-peak-reserved', 'max-peak-allocated', 'category', 'no-new-oom', 'conf', 'capacity', 'json', 'junit', 'markdown'],
  },
  batch: {
    synopsis: 'splitscope batch INPUTS... [--conf STRING]... --out results.jsonl [--workers N] [--shard I/N] [--capacity SIZE]',
    about: 'a fleet\'s snapshots (files or folders) under each config, in worker threads, a JSON row per file\n  and config; resumes where a killed run stopped; --shard for a cluster',
    options: ['conf', 'out', 'workers', 'shard', 'capacity'],
  },
  'batch-summary': {
    synopsis: 'splitscope batch-summary results.jsonl... [--json]',
    about: 'which config would have saved how many of the OOMs, and which are not fragmentation',
    options: ['json'],
  },
  mcp: {
    synopsis: 'splitscope mcp [--out-dir DIR] [--call-timeout SECONDS]',
    about: 'serves the Model Context Protocol on stdin/stdout for agents: the tools summarize, stats, replay,\n  sweep, explain, compare, predict, batch and report, each taking file paths',
    options: ['out-dir', 'call-timeout'],
  },
};

const FILE_NOTE =
  'FILE is a torch.cuda.memory._dump_snapshot pickle (.pickle, .pickle.gz) or the same structure as JSON.\n' +
  'Exit codes: 0 done (OOMs in a replay are results), 1 a limit broken (check), 2 a mistake on the command\n' +
  'line or an input that cannot be read, 70 a bug in splitscope.';

/** `splitscope CMD --help`. */
export function commandHelp(command: Command): string {
  const u = USAGES[command];
  const options = [...u.options, 'help' as const].map((o) => `  ${OPTION_HELP[o].replace(/\n/g, '\n  ')}`).join('\n');
  return `usage: ${u.synopsis}\n\n  ${u.about}\n\noptions:\n${options}\n\n${FILE_NOTE}`;
}

/** `splitscope --help`: every command's synopsis. */
export function overallHelp(): string {
  const lines = Object.values(USAGES).map((u) => `  ${u.synopsis}`);
  return `usage:\n${lines.join('\n')}\n\n'splitscope COMMAND --help' says what a command does and each of its options.\n\n${FILE_NOTE}`;
}
