import { expect, test } from 'vitest';
import { grouped } from '../../src/lib/grouped';

test('commas between thousands, as toLocaleString("en-US") writes integers', () => {
  for (const n of [0, 7, 999, 1000, 32661, 1234567, -1234567, 10_219_421_696, Number.MAX_SAFE_INTEGER]) expect(grouped(n)).toBe(n.toLocaleString('en-US'));
  expect(grouped(1.5)).toBe('1.5');
});
