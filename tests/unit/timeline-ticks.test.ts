import { expect, test } from 'vitest';
import { GiB, KiB, MiB } from '../../src/allocator/constants';
import { byteAxis } from '../../src/views/timeline-ticks';

test('ticks sit on round multiples of one unit, the top covers the data', () => {
  const a = byteAxis(13.2 * GiB, 5);
  expect(a.ticks[0]).toBe(0);
  expect(a.top).toBeGreaterThanOrEqual(13.2 * GiB);
  expect(a.ticks.at(-1)).toBe(a.top);
  expect(a.ticks.map(a.format)).toEqual(['0 GiB', '2 GiB', '4 GiB', '6 GiB', '8 GiB', '10 GiB', '12 GiB', '14 GiB']);
});

test('the unit follows format_size thresholds and fractional steps keep their digits', () => {
  expect(byteAxis(1 * GiB).format(512 * MiB)).toBe('512 MiB'); // exactly 1 GiB prints as MiB in format_size
  expect(byteAxis(1.5 * GiB, 4).ticks.map(byteAxis(1.5 * GiB, 4).format)).toEqual(['0.0 GiB', '0.5 GiB', '1.0 GiB', '1.5 GiB']);
  expect(byteAxis(300 * KiB).format(100 * KiB)).toBe('100 KiB');
  expect(byteAxis(0).top).toBeGreaterThan(0);
});
