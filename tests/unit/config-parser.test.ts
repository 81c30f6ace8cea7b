import { describe, expect, test } from 'vitest';
import { configToString, DEFAULT_CONFIG } from '../../src/allocator/config';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { ConfigError } from '../../src/allocator/config-error';
import { MiB } from '../../src/allocator/constants';

const parse = (s: string) => parseAllocConf(s).config;
const refuse = (s: string): string => {
  try {
    parseAllocConf(s);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`accepted: ${s}`);
};

describe('PYTORCH_CUDA_ALLOC_CONF parser', () => {
  test('empty string gives the defaults', () => {
    expect(parse('')).toEqual(DEFAULT_CONFIG);
    expect(parse('  ')).toEqual(DEFAULT_CONFIG);
  });

  test('keys, spaces and the NAME= prefix people paste', () => {
    const c = parse('export PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb: 128, garbage_collection_threshold:0.6 ,expandable_segments:False"');
    expect(c.maxSplitSize).toBe(128 * MiB);
    expect(c.garbageCollectionThreshold).toBe(0.6);
    expect(c.expandableSegments).toBe(false);
    expect(parse('PYTORCH_ALLOC_CONF=max_non_split_rounding_mb:64').maxNonSplitRounding).toBe(64 * MiB);
  });

  test('roundup_power2_divisions: one value fills every bucket', () => {
    expect(parse('roundup_power2_divisions:4').roundupPower2Divisions).toEqual(new Array(16).fill(4));
  });

  test('roundup_power2_divisions list as torch 2.11 resolves it (the recorded allocator_settings)', () => {
    // Recorded in random-s1__max_split_size_mb=256+roundup_power2_divisions=...: buckets 1..256 -> 1,
    // 512 -> 2, 1024 -> 4 and '>' fills from the bucket after the last one named.
    const d = parse('max_split_size_mb:256,roundup_power2_divisions:[256:1,512:2,1024:4,>:8]').roundupPower2Divisions;
    expect(d).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8]);
  });

  test('PyTorch limits are refused with its reason', () => {
    expect(refuse('max_split_size_mb:19')).toMatch(/max_split_size_mb too small, must be >= 20/);
    expect(refuse('garbage_collection_threshold:1.0')).toMatch(/set it in \(0\.0, 1\.0\)/);
    expect(refuse('roundup_power2_divisions:3')).toMatch(/power of 2/);
    expect(refuse('roundup_power2_divisions:[256:3]')).toMatch(/power of 2/);
    expect(refuse('roundup_power2_divisions:[300:2]')).toMatch(/intervals have to be power of 2/);
    expect(refuse('roundup_power2_divisions:[256:1,512:2')).toMatch(/closing/);
    expect(refuse('expandable_segments:true')).toMatch(/'True' or 'False'.*capitalized/);
    expect(refuse('backend:magic')).toMatch(/Unknown allocator backend/);
  });

  test('unknown keys name the key and suggest the right one', () => {
    expect(refuse('max_split_size:128')).toMatch(/Unrecognized key 'max_split_size'.*max_split_size_mb/);
    expect(refuse('max_split_size_mb=128')).toMatch(/Unrecognized key.*separated by ':'/);
    expect(refuse('foo:1')).toMatch(/Unrecognized key 'foo' in CUDA allocator config/);
  });

  test('the per-device variable myth is corrected', () => {
    expect(refuse('PYTORCH_CUDA_ALLOC_CONF_0=max_split_size_mb:128')).toMatch(/does not exist.*every GPU/);
  });

  test('malformed structure', () => {
    expect(refuse('max_split_size_mb')).toMatch(/ends where/);
    expect(refuse('max_split_size_mb:')).toMatch(/ends where/);
    expect(refuse('max_split_size_mb:abc')).toMatch(/whole number/);
    expect(refuse('max_split_size_mb:128 expandable_segments:True')).toMatch(/Unrecognized key|Expected ','/);
  });

  test('values PyTorch reads leniently give a warning', () => {
    const { config, warnings } = parseAllocConf('max_split_size_mb:128MB');
    expect(config.maxSplitSize).toBe(128 * MiB);
    expect(warnings[0]).toMatch(/reads '128MB'.*as 128/);
  });

  test('passive CUDA keys are accepted and kept', () => {
    const c = parse('release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:False,pinned_num_register_threads:8');
    expect(c.passive).toEqual({
      release_lock_on_cudamalloc: 'True',
      pinned_use_cuda_host_register: 'False',
      pinned_num_register_threads: '8',
    });
  });

  test('configToString round-trips', () => {
    for (const s of [
      'max_split_size_mb:128',
      'max_split_size_mb:256,roundup_power2_divisions:[256:1,512:2,1024:4,>:8]',
      'garbage_collection_threshold:0.6,max_split_size_mb:256',
      'roundup_power2_divisions:4,max_non_split_rounding_mb:40',
      'expandable_segments:True',
    ]) {
      const c = parse(s);
      expect(parse(configToString(c))).toEqual(c);
    }
  });
});
