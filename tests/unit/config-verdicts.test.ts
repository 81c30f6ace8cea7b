// The config parser against PyTorch's own verdicts: 148 PYTORCH_CUDA_ALLOC_CONF strings (valid, invalid,
// odd spacing, duplicates, every key's limits), each run in a fresh torch 2.11 process on an H200
// (tests/fixtures/conf-verdicts.json, recorded by scripts/device/record-conf-verdicts.py). Every string is
// accepted or refused as PyTorch did, with PyTorch's reason in the message, and what an accepted one
// resolves to equals what PyTorch resolved it to.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { H200_TOTAL_MEMORY } from '../../src/allocator/capacity';
import { maxSplitSizeStat } from '../../src/allocator/config';
import { ConfigError } from '../../src/allocator/config-error';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { MiB } from '../../src/allocator/constants';
import { segmentSizeFor } from '../../src/allocator/sizes';

interface Verdict {
  conf: string;
  stage: string | null;
  config_accepted: boolean;
  error?: string;
  max_split_size?: number;
  garbage_collection_threshold?: number;
  expandable_segments?: boolean;
  roundup_power2_divisions?: number[];
  per_process_memory_fraction?: number;
  segment_for_5mib?: number;
}

const { verdicts } = JSON.parse(readFileSync(join(__dirname, '../fixtures/conf-verdicts.json'), 'utf8')) as { verdicts: Verdict[] };

describe("the config parser gives PyTorch 2.11's verdict", () => {
  test('the corpus is there', () => {
    expect(verdicts.length).toBeGreaterThanOrEqual(100);
    expect(verdicts.filter((v) => v.config_accepted).length).toBeGreaterThan(40);
    expect(verdicts.filter((v) => !v.config_accepted).length).toBeGreaterThan(40);
  });

  test.each(verdicts.map((v) => [JSON.stringify(v.conf), v] as const))('%s', (_name, v) => {
    let parsed: ReturnType<typeof parseAllocConf> | null = null;
    let refusal = '';
    try {
      parsed = parseAllocConf(v.conf);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      refusal = (e as Error).message;
    }
    if (!v.config_accepted) {
      expect([v.conf, parsed === null]).toEqual([v.conf, true]);
      // PyTorch's reason, in its words (an abort at import is named as such).
      if (v.stage === 'crash') expect(refusal).toMatch(/aborts while importing torch/);
      else if (/INTERNAL ASSERT/.test(v.error ?? '')) expect(refusal).toMatch(/Index out of bounds in ConfigTokenizer/);
      else expect(refusal).toContain(v.error!.replace(/\s+$/, ''));
      return;
    }
    expect([v.conf, refusal]).toEqual([v.conf, '']);
    const c = parsed!.config;
    if (v.max_split_size !== undefined) expect(maxSplitSizeStat(c)).toBe(v.max_split_size);
    if (v.garbage_collection_threshold !== undefined) expect(c.garbageCollectionThreshold).toBe(v.garbage_collection_threshold);
    if (v.expandable_segments !== undefined) expect(c.expandableSegments).toBe(v.expandable_segments);
    if (v.roundup_power2_divisions) expect([...c.roundupPower2Divisions]).toEqual(v.roundup_power2_divisions);
    if (v.per_process_memory_fraction !== undefined && c.backend === 'native') {
      // torch reports allowed / total, with allowed = floor(fraction x total).
      const fraction = c.perProcessMemoryFraction ?? 1;
      const allowed = fraction < 1 ? Math.floor(fraction * H200_TOTAL_MEMORY) : H200_TOTAL_MEMORY;
      expect(allowed / H200_TOTAL_MEMORY).toBeCloseTo(v.per_process_memory_fraction, 12);
    }
    if (v.segment_for_5mib !== undefined && c.backend === 'native') expect(segmentSizeFor(5 * MiB, c.largeSegmentSize)).toBe(v.segment_for_5mib);
  });
});
