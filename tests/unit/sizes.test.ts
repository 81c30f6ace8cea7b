import { describe, expect, test } from 'vitest';
import { floorLog2 } from '../../src/allocator/bits';
import { parseByteSize } from '../../src/allocator/byte-size';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { MiB } from '../../src/allocator/constants';
import { formatSize } from '../../src/allocator/format-size';
import { isSmallSize, roundSize, segmentSizeFor } from '../../src/allocator/sizes';

describe('request rounding', () => {
  test('512-byte granularity by default', () => {
    expect(roundSize(1, DEFAULT_CONFIG)).toBe(512);
    expect(roundSize(512, DEFAULT_CONFIG)).toBe(512);
    expect(roundSize(513, DEFAULT_CONFIG)).toBe(1024);
    expect(roundSize(3297, DEFAULT_CONFIG)).toBe(3584);
  });

  test('power-of-two divisions, bucket 0 covering sizes below 2 MiB', () => {
    const c = parseAllocConf('roundup_power2_divisions:4').config;
    expect(roundSize(3297, c)).toBe(3584); // 2048 + 3 * 512
    // Divisions apply only above 512 * divisions bytes (PyTorch's comment example, 1200 -> 1280, skips that).
    expect(roundSize(1200, c)).toBe(1536);
    expect(roundSize(2049, c)).toBe(2560);
    expect(roundSize(4097, c)).toBe(5120);
    expect(roundSize(5 * MiB + 1, c)).toBe(5 * MiB + MiB); // step 1 MiB above 4 MiB
    expect(roundSize(1000, c)).toBe(1024); // below 512 * divisions: plain 512 rounding
  });

  test('rounding is idempotent', () => {
    const c = parseAllocConf('roundup_power2_divisions:[1:2,64:8,>:4]').config;
    for (let s = 1; s < 40 * MiB; s = Math.ceil(s * 1.37) + 7) {
      expect(roundSize(roundSize(s, c), c)).toBe(roundSize(s, c));
    }
  });

  test('pools and segment sizes', () => {
    expect(isSmallSize(MiB)).toBe(true);
    expect(isSmallSize(MiB + 512)).toBe(false);
    expect(segmentSizeFor(512)).toBe(2 * MiB);
    expect(segmentSizeFor(MiB + 512)).toBe(20 * MiB);
    expect(segmentSizeFor(10 * MiB - 512)).toBe(20 * MiB);
    expect(segmentSizeFor(10 * MiB)).toBe(10 * MiB);
    expect(segmentSizeFor(10 * MiB + 512)).toBe(12 * MiB);
  });

  test('floorLog2 is exact near powers of two', () => {
    for (let e = 0; e < 53; e++) {
      expect(floorLog2(2 ** e)).toBe(e);
      if (e > 1) expect(floorLog2(2 ** e - 1)).toBe(e - 1);
    }
  });
});

describe('sizes for people', () => {
  test("format_size as PyTorch prints it", () => {
    expect(formatSize(1024)).toBe('1024 bytes');
    expect(formatSize(1536)).toBe('1.50 KiB');
    expect(formatSize(MiB)).toBe('1024.00 KiB');
    expect(formatSize(671088640)).toBe('640.00 MiB');
    expect(formatSize(6442450944)).toBe('6.00 GiB');
  });

  test('byte sizes with units', () => {
    expect(parseByteSize('6442450944')).toBe(6442450944);
    expect(parseByteSize('6GiB')).toBe(6442450944);
    expect(parseByteSize('80 GB')).toBe(80e9);
    expect(parseByteSize('1.5MiB')).toBe(1572864);
    expect(() => parseByteSize('6 GiBs')).toThrow(/not a size/);
    expect(() => parseByteSize('-1')).toThrow(/not a size/);
    expect(() => parseByteSize('0')).toThrow(/more than 0/);
  });
});
