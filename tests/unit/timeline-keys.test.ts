import { expect, test } from 'vitest';
import { keysTakenBy, keyTarget } from '../../src/views/timeline-keys';

test('arrows step one, Shift 1% of the requests, Home/End jump, all clamped', () => {
  expect(keyTarget('ArrowRight', false, 5, 25_720)).toBe(6);
  expect(keyTarget('ArrowLeft', false, 5, 25_720)).toBe(4);
  expect(keyTarget('ArrowRight', true, 5, 25_720)).toBe(5 + 257);
  expect(keyTarget('ArrowLeft', true, 5, 25_720)).toBe(0);
  expect(keyTarget('ArrowRight', false, 25_719, 25_720)).toBe(25_719);
  expect(keyTarget('ArrowLeft', true, 10, 50)).toBe(9); // 1% of 50 rounds to at least one
  expect(keyTarget('Home', false, 500, 1000)).toBe(0);
  expect(keyTarget('End', false, 5, 1000)).toBe(999);
  expect(keyTarget('a', false, 5, 1000)).toBeNull();
  expect(keyTarget('ArrowRight', false, 0, 0)).toBeNull();
});

test('fields, selects and sliders keep their keys; buttons and the body do not', () => {
  const el = (tagName: string, role: string | null = null) => ({ tagName, getAttribute: () => role }) as unknown as Element;
  expect(keysTakenBy(el('INPUT'))).toBe(true);
  expect(keysTakenBy(el('TEXTAREA'))).toBe(true);
  expect(keysTakenBy(el('SELECT'))).toBe(true);
  expect(keysTakenBy(el('DIV', 'slider'))).toBe(true);
  expect(keysTakenBy(el('BUTTON'))).toBe(false);
  expect(keysTakenBy(el('BODY'))).toBe(false);
  expect(keysTakenBy(null)).toBe(false);
});
