// PYTORCH_CUDA_ALLOC_CONF as torch 2.11 reads it, in its three passes (c10/core/AllocatorConfig.{h,cpp},
// c10/cuda/CUDAAllocatorConfig.cpp and the load-time scan in CUDACachingAllocator.cpp), so that a string
// is accepted or refused as PyTorch does (tests/unit/config-verdicts.test.ts holds its recorded verdicts):
//   1. at `import torch`, a scan for `backend`: a key with no value, or a '[' never closed, aborts;
//   2. at CUDA init, the CUDA keys (and the check that every key is known);
//   3. then the caching allocator's keys, large_segment_size_mb first (it is the floor of the others).
// The tokenizer splits on , : [ ] and deletes ASCII whitespace. torch never checks that a separator is
// the one expected (key, value and next key sit at i, i + 2, i + 4), and reads numbers as C's stoull and
// stod do: a leading number, the rest ignored. Those leniencies are accepted with a warning. A refusal
// quotes PyTorch's own message, worded for a person where it helps.
import { H200_TOTAL_MEMORY } from './capacity';
import { DEFAULT_CONFIG, type AllocatorConfig } from './config';
import { ConfigError } from './config-error';
import { LARGE_BUFFER, MIN_LARGE_ALLOC, MiB, ROUNDUP_POWER2_INTERVALS } from './constants';

export interface ParsedConfig {
  config: AllocatorConfig;
  /** Things PyTorch accepts silently but that are probably not what was meant. */
  warnings: string[];
}

interface Token {
  text: string;
  at: number;
}

const BOOL_CUDA_KEYS = [
  'release_lock_on_cudamalloc',
  'release_lock_on_hipmalloc',
  'pinned_use_cuda_host_register',
  'pinned_use_hip_host_register',
  'graph_capture_record_stream_reuse',
];
/** The CUDA part's keys (CUDAAllocatorConfig::getKeys). */
const CUDA_KEYS = ['backend', ...BOOL_CUDA_KEYS, 'pinned_reserve_segment_size_mb', 'pinned_num_register_threads', 'per_process_memory_fraction'];
/** The caching allocator's keys (AcceleratorAllocatorConfig::getKeys). */
const ACCELERATOR_KEYS = [
  'large_segment_size_mb',
  'max_split_size_mb',
  'max_non_split_rounding_mb',
  'garbage_collection_threshold',
  'roundup_power2_divisions',
  'expandable_segments',
  'pinned_use_background_threads',
];
const KNOWN_KEYS = new Set([...CUDA_KEYS, ...ACCELERATOR_KEYS]);

const TWO_64 = 1n << 64n;
const MAX_REGISTER_THREADS = 128;

/** Splits on , : [ ] and deletes C's whitespace (space, \t \n \v \f \r), like ConfigTokenizer. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let buffer = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === ',' || ch === ':' || ch === '[' || ch === ']') {
      if (buffer) tokens.push({ text: buffer, at: start });
      buffer = '';
      tokens.push({ text: ch, at: i });
    } else if (!/[ \t\n\v\f\r]/.test(ch)) {
      if (!buffer) start = i;
      buffer += ch;
    }
  }
  if (buffer) tokens.push({ text: buffer, at: start });
  return tokens;
}

/**
 * What people paste along with the value: `export NAME=` or `NAME=`, and the shell's quotes around
 * what follows. Only with such a prefix: a bare value with quotes is what PyTorch would see, and refuse.
 */
function stripAssignment(raw: string): string {
  const text = raw.trim().replace(/^export\s+/, '');
  const assignment = /^([A-Z_][A-Z0-9_]*)\s*=\s*/.exec(text);
  if (!assignment) return raw;
  const name = assignment[1]!;
  if (/^PYTORCH_(CUDA_|HIP_)?ALLOC_CONF_\d+$/.test(name)) {
    throw new ConfigError(
      `${name} does not exist: PyTorch reads one PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) for the whole ` +
        'process and applies it to every GPU. There are no per-device variables; to treat GPUs differently, run ' +
        'one process per GPU with its own setting.',
      0,
    );
  }
  if (!/^PYTORCH_(CUDA_|HIP_)?ALLOC_CONF$/.test(name)) {
    throw new ConfigError(
      `${name} is not an allocator setting: paste the value of PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF), ` +
        'e.g. max_split_size_mb:128,expandable_segments:True.',
      0,
    );
  }
  const value = text.slice(assignment[0].length);
  const quoted = /^(['"])(.*)\1$/s.exec(value);
  return quoted ? quoted[2]! : value;
}

function closestKey(key: string): string | undefined {
  const lower = key.toLowerCase().replace(/-/g, '_');
  for (const k of KNOWN_KEYS) if (k === lower) return k;
  for (const k of KNOWN_KEYS) if (k.startsWith(lower) || lower.startsWith(k.replace(/_mb$/, ''))) return k;
  return undefined;
}

const isPowerOf2 = (v: bigint): boolean => v > 0n && (v & (v - 1n)) === 0n;

/** std::stoull: a leading base-10 number (sign allowed; a minus wraps modulo 2^64). Null: none there. */
function stoull(text: string): { value: bigint; used: number } | null {
  const m = /^[+-]?\d+/.exec(text);
  if (!m) return null;
  const negative = m[0].startsWith('-');
  let v = BigInt(m[0].replace(/^[+-]/, ''));
  if (v >= TWO_64) return { value: -1n, used: m[0].length }; // out of range
  if (negative) v = (TWO_64 - v) % TWO_64;
  return { value: v, used: m[0].length };
}

/** std::stod (strtod): decimal or hex floats, inf, nan. Null: no number there; NaN value: out of range. */
function stod(text: string): { value: number; used: number } | null {
  const special = /^[+-]?(inf(inity)?|nan(\([0-9a-z_]*\))?)/i.exec(text);
  if (special) {
    const v = /nan/i.test(special[0]) ? NaN : special[0].startsWith('-') ? -Infinity : Infinity;
    return { value: v, used: special[0].length };
  }
  const hex = /^([+-]?)0[xX](?:([0-9a-fA-F]+)(?:\.([0-9a-fA-F]*))?|\.([0-9a-fA-F]+))(?:[pP]([+-]?\d+))?/.exec(text);
  if (hex) {
    const int = hex[2] ?? '';
    const frac = hex[3] ?? hex[4] ?? '';
    let v = 0;
    for (const d of int + frac) v = v * 16 + parseInt(d, 16);
    v *= 2 ** (Number(hex[5] ?? 0) - 4 * frac.length);
    return { value: hex[1] === '-' ? -v : v, used: hex[0].length };
  }
  const dec = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text);
  if (!dec) return null;
  const v = Number(dec[0]);
  // ERANGE: overflow to infinity, or underflow to 0 or a subnormal from a number that is not zero.
  const nonzero = /[1-9]/.test(dec[1]!);
  if (!Number.isFinite(v) || (nonzero && Math.abs(v) < 2.2250738585072014e-308)) return { value: NaN, used: -1 };
  return { value: v, used: dec[0].length };
}

/** Parses a PYTORCH_CUDA_ALLOC_CONF value (or `PYTORCH_CUDA_ALLOC_CONF=value`). Throws ConfigError. */
export function parseAllocConf(raw: string): ParsedConfig {
  const text = stripAssignment(raw);
  const tokens = tokenize(text);
  const n = tokens.length;
  const said = new Set<string>();
  const warn = (w: string): void => void said.add(w);
  const tok = (i: number): string | undefined => tokens[i]?.text;
  const atOf = (i: number): number => tokens[i]?.at ?? text.length;
  const keyOf = (i: number): string => tokens[i]?.text ?? '';

  // ---------------------------------------------------------------- pass 1: the scan at import
  const aborts = (i: number, what: string): never => {
    const key = keyOf(i);
    const unknown = KNOWN_KEYS.has(key) ? '' : `Unrecognized key '${key}', and the config has no value for it. `;
    throw new ConfigError(
      `${unknown}${what}: PyTorch aborts while importing torch on this string (its config tokenizer asserts "${
        what.includes("']'") ? "Expected closing bracket ']' in ConfigTokenizer but reached end of config" : 'Index out of bounds in ConfigTokenizer'
      }").` + (text.includes('=') ? " Keys and values are separated by ':' (e.g. max_split_size_mb:128)." : ''),
      atOf(i),
    );
  };
  /** ConfigTokenizer::skipKey from the key at i: the index of its value (of the ']' of a list). */
  const skipKey = (i: number, fatal: (i: number, what: string) => never): number => {
    if (i + 2 >= n) fatal(i, `The config ends where a value for '${keyOf(i)}' was expected`);
    let v = i + 2;
    if (tok(v) !== '[') return v;
    while (++v < n && tok(v) !== ']') {
      /* to the list's end */
    }
    if (v >= n) fatal(i, `The list for '${keyOf(i)}' has no closing ']'`);
    return v;
  };
  for (let i = 0; i < n; i++) {
    if (tok(i) === 'backend') {
      if (i + 2 >= n) aborts(i, "The config ends where a value for 'backend' was expected");
      break;
    }
    i = skipKey(i, aborts);
    if (i + 1 < n) i++;
  }

  // Later passes fail with an error at CUDA init rather than at import.
  const fails = (i: number, what: string): never => {
    throw new ConfigError(`${what} (PyTorch: "Index out of bounds in ConfigTokenizer").`, atOf(i));
  };
  const need = (i: number, what: string): string => {
    if (i >= n) fails(i, `The config ends where ${what} was expected`);
    return tokens[i]!.text;
  };
  /** The separator torch skips without reading it: warn when it is not the one meant. */
  const separator = (i: number, symbol: string, after: string): void => {
    const t = tok(i);
    if (t !== undefined && t !== symbol) {
      warn(`PyTorch does not check separators: it reads '${t}' after ${after} as if it were '${symbol}'.`);
    }
  };
  const whole = (i: number, key: string): bigint => {
    const t = need(i, `a value for ${key}`);
    const r = stoull(t);
    // PyTorch's own message is just "stoull", the C function that failed to read the number.
    if (!r) throw new ConfigError(`${key} needs a whole number, got '${t}' (PyTorch says only "stoull": it could not read a number there).`, atOf(i));
    if (r.value < 0n) throw new ConfigError(`${key}: '${t}' is out of range for a 64-bit size (PyTorch says only "stoull": the number does not fit).`, atOf(i));
    if (r.used !== t.length) warn(`PyTorch reads '${t}' for ${key} as ${t.slice(0, r.used)} and ignores the rest.`);
    if (t.startsWith('-')) warn(`PyTorch reads '${t}' for ${key} as ${r.value} (it reads numbers with C's stoull, where a negative number wraps around to a huge one).`);
    return r.value;
  };
  const real = (i: number, key: string): number => {
    const t = need(i, `a value for ${key}`);
    const r = stod(t);
    if (!r) throw new ConfigError(`${key} needs a number, got '${t}' (PyTorch: "stod").`, atOf(i));
    if (r.used < 0) throw new ConfigError(`${key}: '${t}' is out of the range of a double (PyTorch: "stod").`, atOf(i));
    if (r.used !== t.length) warn(`PyTorch reads '${t}' for ${key} as ${t.slice(0, r.used)} and ignores the rest.`);
    return r.value;
  };
  const bool = (i: number, key: string): boolean => {
    const t = need(i, `True or False for ${key}`);
    if (t === 'True') return true;
    if (t === 'False') return false;
    const hint = /^(true|false|1|0|yes|no)$/i.test(t) ? ' (capitalized: True or False)' : '';
    throw new ConfigError(`Expected 'True' or 'False' for ${key} but got '${t}'${hint} (PyTorch: "Expected 'True' or 'False' at index ${i} in ConfigTokenizer but got '${t}'").`, atOf(i));
  };

  // ---------------------------------------------------------------- pass 2: the CUDA keys
  let backend: AllocatorConfig['backend'] = 'native';
  let perProcessMemoryFraction: number | undefined;
  const passive: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    const key = keyOf(i);
    if (key === 'backend') {
      separator(i + 1, ':', key);
      const value = need(i + 2, 'a backend name');
      if (value !== 'native' && value !== 'cudaMallocAsync') {
        throw new ConfigError(`Unknown allocator backend, options are native and cudaMallocAsync (got '${value}').`, atOf(i + 2));
      }
      backend = value;
      i += 2;
    } else if (BOOL_CUDA_KEYS.includes(key)) {
      separator(i + 1, ':', key);
      passive[key] = bool(i + 2, key) ? 'True' : 'False';
      i += 2;
    } else if (key === 'pinned_num_register_threads') {
      separator(i + 1, ':', key);
      const v = whole(i + 2, key);
      if (!isPowerOf2(v)) throw new ConfigError(`Number of register threads has to be power of 2, got ${v}.`, atOf(i + 2));
      if (v > BigInt(MAX_REGISTER_THREADS)) {
        throw new ConfigError(`Number of register threads should be less than or equal to ${MAX_REGISTER_THREADS}, got ${v}.`, atOf(i + 2));
      }
      passive[key] = String(v);
      i += 2;
    } else if (key === 'pinned_reserve_segment_size_mb') {
      separator(i + 1, ':', key);
      const v = whole(i + 2, key);
      if (v === 0n) throw new ConfigError('Pinned reserve segment size has to be greater than 0.', atOf(i + 2));
      passive[key] = String(v);
      i += 2;
    } else if (key === 'per_process_memory_fraction') {
      separator(i + 1, ':', key);
      const v = real(i + 2, key);
      if (!(v >= 0 && v <= 1)) {
        throw new ConfigError(`per_process_memory_fraction is invalid, set it in [0.0, 1.0] (got ${tok(i + 2)}).`, atOf(i + 2));
      }
      perProcessMemoryFraction = v;
      i += 2;
    } else {
      if (!KNOWN_KEYS.has(key)) {
        const guess = closestKey(key);
        const hint = guess && guess !== key ? ` Did you mean '${guess}'?` : '';
        throw new ConfigError(`Unrecognized key '${key}' in CUDA allocator config.${hint}`, atOf(i));
      }
      i = skipKey(i, fails);
    }
    if (i + 1 < n) separator(++i, ',', `the value of ${key}`);
  }

  // ---------------------------------------------------------------- pass 3: the caching allocator's keys
  // large_segment_size_mb first, wherever it stands: the other sizes must be at least it.
  let largeSegmentSize = LARGE_BUFFER;
  for (let i = 0; i < n; i++) {
    if (tok(i) !== 'large_segment_size_mb') continue;
    const v = whole(i + 2, 'large_segment_size_mb');
    if (v <= BigInt(MIN_LARGE_ALLOC / MiB)) {
      throw new ConfigError(`CachingAllocator option large_segment_size_mb must be > ${MIN_LARGE_ALLOC / MiB} MB (got ${tok(i + 2)}).`, atOf(i + 2));
    }
    largeSegmentSize = Number(v < TWO_64 / BigInt(MiB) ? v : (TWO_64 - 1n) / BigInt(MiB)) * MiB;
    i += 2;
  }
  const floorMiB = largeSegmentSize / MiB;
  let maxSplitSize = DEFAULT_CONFIG.maxSplitSize;
  let maxNonSplitRounding = largeSegmentSize;
  const divisions = new Array<number>(ROUNDUP_POWER2_INTERVALS).fill(0);
  let gcThreshold = DEFAULT_CONFIG.garbageCollectionThreshold;
  let expandableSegments = DEFAULT_CONFIG.expandableSegments;
  /** A size in MiB as bytes, capped as torch caps it (SIZE_MAX / 1 MiB). */
  const mibBytes = (v: bigint): number => Number(v < (TWO_64 - 1n) / BigInt(MiB) ? v : (TWO_64 - 1n) / BigInt(MiB)) * MiB;
  for (let i = 0; i < n; i++) {
    const key = keyOf(i);
    separator(i + 1, ':', key);
    switch (key) {
      case 'max_split_size_mb':
      case 'max_non_split_rounding_mb': {
        const v = whole(i + 2, key);
        if (v < BigInt(floorMiB)) {
          throw new ConfigError(
            `CachingAllocator option ${key} too small, must be >= ${floorMiB} (got ${tok(i + 2)}).` +
              (key === 'max_split_size_mb' ? ' It is not a cap on request size: it is the block size above which cached blocks are never split.' : ''),
            atOf(i + 2),
          );
        }
        if (key === 'max_split_size_mb') maxSplitSize = mibBytes(v);
        else maxNonSplitRounding = mibBytes(v);
        i += 2;
        break;
      }
      case 'garbage_collection_threshold': {
        const v = real(i + 2, key);
        if (!(v > 0 && v < 1)) {
          throw new ConfigError(`garbage_collection_threshold is invalid: "garbage_collect_threshold is invalid, set it in (0.0, 1.0)" (got ${tok(i + 2)}).`, atOf(i + 2));
        }
        gcThreshold = v;
        i += 2;
        break;
      }
      case 'roundup_power2_divisions':
        i = parseDivisions(i);
        break;
      case 'expandable_segments':
        expandableSegments = bool(i + 2, key);
        i += 2;
        break;
      case 'pinned_use_background_threads':
        passive[key] = bool(i + 2, key) ? 'True' : 'False';
        i += 2;
        break;
      default:
        i = skipKey(i, fails); // large_segment_size_mb (read above) and the CUDA keys
    }
    if (i + 1 < n) i++;
  }

  /** roundup_power2_divisions: one value for every bucket, or [MiB:divisions, ..., >:divisions]. A
   * repeated key adds to the buckets of the one before (torch resets them once per string). */
  function parseDivisions(i: number): number {
    const key = 'roundup_power2_divisions';
    const first = need(i + 2, `a value for ${key}`);
    i += 2;
    if (first !== '[') {
      const v = whole(i, key);
      if (!isPowerOf2(v)) throw new ConfigError(`For roundups, the divisions has to be power of 2 (got ${v}).`, atOf(i));
      divisions.fill(Number(v));
      return i;
    }
    let firstValue = true;
    let lastIndex = 0;
    while (++i < n && tok(i) !== ']') {
      const boundaryAt = i;
      separator(i + 1, ':', `'${tok(boundaryAt)}' in ${key}`);
      const v = whole(i + 2, `${key} [${tok(boundaryAt)}]`);
      i += 2;
      if (v !== 0n && !isPowerOf2(v)) {
        throw new ConfigError(`For roundups, the divisions has to be power of 2 or 0 to disable roundup (got ${v}).`, atOf(i));
      }
      const value = Number(v);
      if (tok(boundaryAt) === '>') {
        for (let b = lastIndex + 1; b < ROUNDUP_POWER2_INTERVALS; b++) divisions[b] = value;
      } else {
        const mib = whole(boundaryAt, `an interval (MiB) in ${key}`);
        if (!isPowerOf2(mib)) throw new ConfigError(`For roundups, the intervals have to be power of 2 (got ${mib}).`, atOf(boundaryAt));
        const index = Math.min(mib.toString(2).length - 1, ROUNDUP_POWER2_INTERVALS - 1);
        if (firstValue) {
          for (let b = 0; b < index; b++) divisions[b] = value;
          firstValue = false;
        }
        divisions[index] = value;
        lastIndex = index;
      }
      if (i + 1 >= n) fails(i, `The list for ${key} has no closing ']'`);
      if (tok(i + 1) !== ']') {
        separator(i + 1, ',', `an entry of ${key}`);
        i++;
      }
    }
    if (i >= n) fails(i, `The list for ${key} has no closing ']'`);
    return i;
  }

  if (perProcessMemoryFraction !== undefined && Math.floor(perProcessMemoryFraction * H200_TOTAL_MEMORY) < 2 * MiB) {
    warn(`per_process_memory_fraction:${perProcessMemoryFraction} leaves no room: PyTorch accepts it, then every allocation fails with an OOM.`);
  }
  if (expandableSegments && largeSegmentSize % (2 * MiB) !== 0) {
    warn('With expandable_segments, large_segment_size_mb is the page size, and it is not a multiple of 2 MiB: every large allocation then fails with "CUDA driver error: invalid argument".');
  }
  const config: AllocatorConfig = Object.freeze({
    maxSplitSize,
    maxNonSplitRounding,
    largeSegmentSize,
    roundupPower2Divisions: Object.freeze(divisions),
    garbageCollectionThreshold: gcThreshold,
    expandableSegments,
    backend,
    ...(perProcessMemoryFraction !== undefined ? { perProcessMemoryFraction } : {}),
    passive: Object.freeze(passive),
  });
  return { config, warnings: [...said] };
}

/** Why PyTorch 2.11 refuses `raw` (its message), or null when it accepts it. */
export function configRefusal(raw: string): string | null {
  try {
    parseAllocConf(raw);
    return null;
  } catch (e) {
    return e instanceof ConfigError ? e.message : String(e);
  }
}
