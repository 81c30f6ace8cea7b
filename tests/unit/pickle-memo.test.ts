// The memo as the unpickler and the trace rows use it: entries by index, rewinds, shared values.
import { expect, test } from 'vitest';
import { PickleMemo } from '../../src/trace/pickle/pickle-memo';

test('entries read back by index, replaced, and forgotten past a rewind', () => {
  const memo = new PickleMemo();
  const frame = { name: 'f', filename: 'a.py', line: 1 };
  memo.push('x');
  memo.push(frame);
  memo.set(0, 'y');
  expect([memo.length, memo.get(0), memo.get(1), memo.get(2)]).toEqual([2, 'y', frame, undefined]);
  memo.truncate(1);
  expect([memo.length, memo.get(1)]).toEqual([1, undefined]); // a stale slot past length is never read
  memo.truncate(5); // never grows
  expect(memo.length).toBe(1);
});

test('shared values and strings: many entries, each text or stand-in stored once', () => {
  const memo = new PickleMemo();
  const standIn = Object.freeze({ row: true });
  const k = memo.share(standIn);
  expect(memo.share(standIn)).toBe(k);
  // More entries than the first slot array holds: it grows, and every entry keeps its value.
  for (let i = 0; i < 10_000; i++) {
    memo.pushIndex(k);
    memo.pushString(i % 3 === 0 ? 'N/A' : i % 3 === 1 ? 'N/A' : `s${i % 7}`);
  }
  expect(memo.length).toBe(20_000);
  expect(memo.distinct).toBe(1 + 1 + 7); // the stand-in, 'N/A', s0..s6
  for (let i = 0; i < 10_000; i++) {
    expect(memo.get(2 * i)).toBe(standIn);
    expect(memo.get(2 * i + 1)).toBe(i % 3 === 2 ? `s${i % 7}` : 'N/A');
  }
  memo.setIndex(0, memo.share('z'));
  expect(memo.get(0)).toBe('z');
});
