// The stats panel's terms by keyboard: the list is one tab stop (Tab reaches one term, a second Tab
// leaves the list), the arrows, Home and End move between the terms, and each focused term carries
// its explanation; a snapshot's "what is allocated" heading joins the list as its last term.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { GLOSSARY } from '../../src/views/glossary';
import { openPage } from './open-page';

const session = openPage();

/** The focused element: whether it is one of the panel's terms, its text and its title. */
const focused = () =>
  session.page.evaluate(`(() => {
    const el = document.activeElement;
    const terms = [...document.querySelectorAll('.stats-panel .term')];
    return { term: terms.indexOf(el), of: terms.length, text: el?.textContent ?? '', title: el?.getAttribute('title') ?? null };
  })()`) as Promise<{ term: number; of: number; text: string; title: string | null }>;

test('the terms are one tab stop, and the arrows move between them', async () => {
  const page = session.page;
  const panel = page.locator('section.stats-panel');
  await panel.locator('.term').first().waitFor();
  // Tab into the panel: from its start, the first term.
  await panel.evaluate((el) => {
    el.tabIndex = -1;
    el.focus();
  });
  await page.keyboard.press('Tab');
  let at = await focused();
  expect(at.term).toBe(0);
  expect(at.of).toBeGreaterThanOrEqual(13);
  expect(at.text).toBe('allocated');
  expect(at.title).toBe(GLOSSARY.allocated);
  // A second Tab leaves the list.
  await page.keyboard.press('Tab');
  expect((await focused()).term).toBe(-1);
  await page.keyboard.press('Shift+Tab');
  expect((await focused()).term).toBe(0);
  // The arrows, Home and End, each term with its explanation.
  await page.keyboard.press('ArrowDown');
  at = await focused();
  expect([at.term, at.text, at.title]).toEqual([1, 'reserved', GLOSSARY.reserved]);
  await page.keyboard.press('ArrowUp');
  expect((await focused()).term).toBe(0);
  await page.keyboard.press('ArrowUp');
  expect((await focused()).term).toBe(0);
  await page.keyboard.press('End');
  at = await focused();
  expect(at.term).toBe(at.of - 1);
  expect(at.title).toBeTruthy();
  for (let i = at.term - 1; i >= 0; i--) {
    await page.keyboard.press('ArrowUp');
    const t = await focused();
    expect(t.term).toBe(i);
    expect(t.title).toBe(GLOSSARY[t.text as keyof typeof GLOSSARY]);
  }
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  expect((await focused()).text).toBe('active');
  await page.keyboard.press('Home');
  expect((await focused()).term).toBe(0);
  // The list keeps its place: leave it from the third term, and Shift+Tab comes back to that term.
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Tab');
  expect((await focused()).term).toBe(-1);
  await page.keyboard.press('Shift+Tab');
  expect((await focused()).text).toBe('active');
  // One of them is a tab stop, through the replay's redraws.
  expect(await panel.evaluate((el) => [...el.querySelectorAll('.term')].filter((t) => (t as HTMLElement).tabIndex === 0).length)).toBe(1);
});

test("a snapshot's 14 terms, its heading of what is allocated the last, are one tab stop", async () => {
  const page = session.page;
  const FILE = 'vit_oom__default.pickle.gz';
  await page.setInputFiles('header input[type=file]', { name: FILE, mimeType: 'application/gzip', buffer: readFileSync(`tests/fixtures/real/${FILE}`) });
  const panel = page.locator('section.stats-panel');
  await panel.locator('.memory-kinds-stats .term').waitFor({ timeout: 60_000 });
  await panel.locator('.term').first().focus();
  await page.keyboard.press('End');
  const at = await focused();
  expect([at.term, at.of, at.text]).toEqual([13, 14, 'What is allocated, by category']);
  expect(at.title).toMatch(/^Requested bytes of the allocations alive at the cursor/);
  expect(await panel.evaluate((el) => [...el.querySelectorAll('.term')].map((t) => (t as HTMLElement).tabIndex))).toEqual([...Array(13).fill(-1), 0]);
});
