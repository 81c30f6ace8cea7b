// PYTORCH_CUDA_ALLOC_CONF as torch 2.11 reads it: c10/core/AllocatorConfig.{h,cpp}
// (AcceleratorAllocatorConfig + ConfigTokenizer) and c10/cuda/CUDAAllocatorConfig.cpp.
// Valid strings give PyTorch's settings; strings PyTorch refuses are refused with its reason,
// worded for a person, plus a hint where a common mistake is likely.
import { DEFAULT_CONFIG, type AllocatorConfig } from './config';
import { isPowerOf2 } from './bits';
import { ConfigError } from './config-error';
import { MIN_MAX_SPLIT_SIZE_MB, MiB, ROUNDUP_POWER2_INTERVALS } from './constants';

export interface ParsedConfig {
  config: AllocatorConfig;
  /** Things PyTorch accepts silently but that are probably not what was meant. */
  warnings: string[];
}

interface Token {
  text: string;
  at: number;
}

const BOOL_KEYS = new Set([
  'expandable_segments',
  'release_lock_on_cudamalloc',
  'release_lock_on_hipmalloc',
  'pinned_use_cuda_host_register',
  'pinned_use_hip_host_register',
  'pinned_use_background_threads',
  'graph_capture_record_stream_reuse',
]);

const KNOWN_KEYS = [
  'max_split_size_mb',
  'max_non_split_rounding_mb',
  'garbage_collection_threshold',
  'roundup_power2_divisions',
  'expandable_segments',
  'backend',
  'per_process_memory_fraction',
  'pinned_num_register_threads',
  'pinned_reserve_segment_size_mb',
  ...BOOL_KEYS,
];

/** Splits on , : [ ] and drops whitespace, like ConfigTokenizer. */
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
    } else if (!/\s/.test(ch)) {
      if (!buffer) start = i;
      buffer += ch;
    }
  }
  if (buffer) tokens.push({ text: buffer, at: start });
  return tokens;
}

/** Strips what people paste along with the value: `export NAME=`, `NAME=` and quotes. */
function stripAssignment(raw: string): string {
  let text = raw.trim().replace(/^export\s+/, '');
  const assignment = /^([A-Z_][A-Z0-9_]*)\s*=\s*/.exec(text);
  if (assignment) {
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
    text = text.slice(assignment[0].length);
  }
  const quoted = /^(['"])(.*)\1$/s.exec(text);
  return quoted ? quoted[2]! : text;
}

function closestKey(key: string): string | undefined {
  const lower = key.toLowerCase().replace(/-/g, '_');
  const exact = KNOWN_KEYS.find((k) => k === lower);
  if (exact) return exact;
  return KNOWN_KEYS.find((k) => k.startsWith(lower) || lower.startsWith(k.replace(/_mb$/, '')));
}

/** Parses a PYTORCH_CUDA_ALLOC_CONF value (or `PYTORCH_CUDA_ALLOC_CONF=value`). Throws ConfigError. */
export function parseAllocConf(raw: string): ParsedConfig {
  const text = stripAssignment(raw);
  const tokens = tokenize(text);
  const warnings: string[] = [];
  let maxSplitSize = DEFAULT_CONFIG.maxSplitSize;
  let maxNonSplitRounding = DEFAULT_CONFIG.maxNonSplitRounding;
  let divisions = [...DEFAULT_CONFIG.roundupPower2Divisions];
  let gcThreshold = DEFAULT_CONFIG.garbageCollectionThreshold;
  let expandableSegments = DEFAULT_CONFIG.expandableSegments;
  let backend: AllocatorConfig['backend'] = 'native';
  let perProcessMemoryFraction: number | undefined;
  const passive: Record<string, string> = {};

  const endAt = text.length;
  const tokenAt = (i: number, what: string): Token => {
    const token = tokens[i];
    if (!token) throw new ConfigError(`The config ends where ${what} was expected.`, endAt);
    return token;
  };
  const expect = (i: number, symbol: string, after: string): void => {
    const token = tokenAt(i, `'${symbol}' after ${after}`);
    if (token.text !== symbol) {
      throw new ConfigError(`Expected '${symbol}' after ${after} but found '${token.text}'.`, token.at);
    }
  };
  // std::stoull / std::stod read a leading number and ignore the rest; warn about the rest.
  const whole = (i: number, key: string): number => {
    const token = tokenAt(i, `a value for ${key}`);
    const match = /^\+?\d+/.exec(token.text);
    if (!match) {
      throw new ConfigError(`${key} needs a whole number, got '${token.text}'.`, token.at);
    }
    if (match[0].length !== token.text.length) {
      warnings.push(`PyTorch reads '${token.text}' for ${key} as ${match[0]} and ignores the rest.`);
    }
    return Number(match[0]);
  };
  const real = (i: number, key: string): number => {
    const token = tokenAt(i, `a value for ${key}`);
    const match = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(token.text);
    if (!match) throw new ConfigError(`${key} needs a number, got '${token.text}'.`, token.at);
    if (match[0].length !== token.text.length) {
      warnings.push(`PyTorch reads '${token.text}' for ${key} as ${match[0]} and ignores the rest.`);
    }
    return Number(match[0]);
  };
  const bool = (i: number, key: string): boolean => {
    const token = tokenAt(i, `True or False for ${key}`);
    if (token.text === 'True') return true;
    if (token.text === 'False') return false;
    const hint = /^(true|false|1|0|yes|no)$/i.test(token.text) ? ' (capitalized: True or False)' : '';
    throw new ConfigError(`Expected 'True' or 'False' for ${key} but got '${token.text}'${hint}.`, token.at);
  };

  for (let i = 0; i < tokens.length; i++) {
    const keyToken = tokens[i]!;
    const key = keyToken.text;
    switch (key) {
      case 'max_split_size_mb':
      case 'max_non_split_rounding_mb': {
        expect(++i, ':', key);
        const mb = whole(++i, key);
        if (mb < MIN_MAX_SPLIT_SIZE_MB) {
          throw new ConfigError(
            `CachingAllocator option ${key} too small, must be >= ${MIN_MAX_SPLIT_SIZE_MB} (got ${mb}).` +
              (key === 'max_split_size_mb'
                ? ' It is not a cap on request size: it is the block size above which cached blocks are never split.'
                : ''),
            tokens[i]!.at,
          );
        }
        if (key === 'max_split_size_mb') maxSplitSize = mb * MiB;
        else maxNonSplitRounding = mb * MiB;
        break;
      }
      case 'garbage_collection_threshold': {
        expect(++i, ':', key);
        const value = real(++i, key);
        if (!(value > 0 && value < 1)) {
          throw new ConfigError(
            `garbage_collection_threshold is invalid, set it in (0.0, 1.0) (got ${tokens[i]!.text}).`,
            tokens[i]!.at,
          );
        }
        gcThreshold = value;
        break;
      }
      case 'roundup_power2_divisions': {
        expect(++i, ':', key);
        divisions = new Array<number>(ROUNDUP_POWER2_INTERVALS).fill(0);
        const open = tokenAt(++i, `a value for ${key}`);
        if (open.text === '[') {
          let first = true;
          let lastIndex = 0;
          while (++i < tokens.length && tokens[i]!.text !== ']') {
            const boundary = tokens[i]!;
            expect(++i, ':', `'${boundary.text}' in ${key}`);
            const value = whole(++i, `${key} [${boundary.text}]`);
            if (value !== 0 && !isPowerOf2(value)) {
              throw new ConfigError(
                `For roundups, the divisions has to be power of 2 or 0 to disable roundup (got ${value}).`,
                tokens[i]!.at,
              );
            }
            if (boundary.text === '>') {
              // torch 2.11 fills the buckets after the last one named.
              for (let b = lastIndex + 1; b < ROUNDUP_POWER2_INTERVALS; b++) divisions[b] = value;
            } else {
              const mb = whole(i - 2, `an interval (MiB) in ${key}`);
              if (!isPowerOf2(mb)) {
                throw new ConfigError(`For roundups, the intervals have to be power of 2 (got ${mb}).`, boundary.at);
              }
              const index = Math.min(Math.log2(mb), ROUNDUP_POWER2_INTERVALS - 1);
              if (first) {
                for (let b = 0; b < index; b++) divisions[b] = value;
                first = false;
              }
              divisions[index] = value;
              lastIndex = index;
            }
            const next = tokens[i + 1];
            if (next && next.text !== ']') expect(++i, ',', `an entry of ${key}`);
          }
          if (i >= tokens.length) {
            throw new ConfigError(`The list for ${key} has no closing ']'.`, endAt);
          }
        } else {
          const value = whole(i, key);
          if (!isPowerOf2(value)) {
            throw new ConfigError(`For roundups, the divisions has to be power of 2 (got ${value}).`, open.at);
          }
          divisions.fill(value);
        }
        break;
      }
      case 'expandable_segments':
        expect(++i, ':', key);
        expandableSegments = bool(++i, key);
        break;
      case 'backend': {
        expect(++i, ':', key);
        const value = tokenAt(++i, 'a backend name');
        if (value.text !== 'native' && value.text !== 'cudaMallocAsync') {
          throw new ConfigError(
            `Unknown allocator backend '${value.text}', options are native and cudaMallocAsync.`,
            value.at,
          );
        }
        backend = value.text;
        break;
      }
      case 'per_process_memory_fraction': {
        expect(++i, ':', key);
        const value = real(++i, key);
        if (!(value >= 0 && value <= 1)) {
          throw new ConfigError(`per_process_memory_fraction is invalid, set it in [0.0, 1.0] (got ${value}).`);
        }
        perProcessMemoryFraction = value;
        break;
      }
      case 'pinned_num_register_threads':
      case 'pinned_reserve_segment_size_mb': {
        expect(++i, ':', key);
        const value = whole(++i, key);
        if (key === 'pinned_num_register_threads' && !isPowerOf2(value)) {
          throw new ConfigError(`Number of register threads has to be power of 2, got ${value}.`, tokens[i]!.at);
        }
        if (key === 'pinned_reserve_segment_size_mb' && value <= 0) {
          throw new ConfigError('Pinned reserve segment size has to be greater than 0.', tokens[i]!.at);
        }
        passive[key] = String(value);
        break;
      }
      default: {
        if (BOOL_KEYS.has(key)) {
          expect(++i, ':', key);
          passive[key] = bool(++i, key) ? 'True' : 'False';
          break;
        }
        const guess = closestKey(key);
        const hint = guess && guess !== key ? ` Did you mean '${guess}'?` : '';
        const assignment = key.includes('=') ? " Keys and values are separated by ':' (e.g. max_split_size_mb:128)." : '';
        throw new ConfigError(`Unrecognized key '${key}' in CUDA allocator config.${assignment}${hint}`, keyToken.at);
      }
    }
    if (i + 1 < tokens.length) expect(++i, ',', `the value of ${key}`);
  }

  const config: AllocatorConfig = Object.freeze({
    maxSplitSize,
    maxNonSplitRounding,
    roundupPower2Divisions: Object.freeze(divisions),
    garbageCollectionThreshold: gcThreshold,
    expandableSegments,
    backend,
    ...(perProcessMemoryFraction !== undefined ? { perProcessMemoryFraction } : {}),
    passive: Object.freeze(passive),
  });
  return { config, warnings };
}
