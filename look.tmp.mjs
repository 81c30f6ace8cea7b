import { chromium } from 'playwright-core';
import { preview } from 'vite';
const server = await preview({ root: process.env.ROOT ?? process.cwd(), preview: { host: '127.0.0.1', port: 0 }, logLevel: 'warn' });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: false, args: ['--no-sandbox','--enable-unsafe-webgpu','--enable-features=Vulkan','--use-vulkan=swiftshader','--use-webgpu-adapter=swiftshader','--disable-vulkan-surface'] });
const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
const errors = []; page.on('pageerror', (e) => errors.push(e.message)); page.on('console', (m) => console.error('CONSOLE', m.type(), m.text().slice(0, 300))); page.on('worker', (w) => w.on('console', (m) => console.error('WCONSOLE', m.text().slice(0,300))));
await page.goto(server.resolvedUrls.local[0]);
await page.waitForFunction(`'splitscope' in window`);
await page.getByRole('region', { name: 'GPU stress' }).getByRole('button', { name: 'Pause' }).click({ timeout: 60000 });
for (const f of (process.env.ONLY ?? 'oom__default,compiled__default,ring__default,prefetch__default').split(',')) {
  await page.setInputFiles('input[type=file]', `/work/shared/traces-real/${f}.pickle.gz`);
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes(${JSON.stringify(f)})`, undefined, { timeout: 60000 });
  console.error(f, 'shown', Date.now());
  await page.evaluate('window.splitscope.ready()');
  console.error(f, 'ready', Date.now());
  for (let i = 0; i < 6 && process.env.DEBUG; i++) { await new Promise((r) => setTimeout(r, 1000)); console.error(await page.evaluate(`[...document.querySelectorAll('section, [role=region]')].map((e) => e.getAttribute('aria-label') + ': ' + e.innerText.slice(0, 160).replace(/\\n/g, ' | ')).join('\\n')`)); }
  const t = (p) => Promise.race([p, new Promise((r) => setTimeout(() => r('TIMEOUT'), 8000))]);
  console.error('sweep()', JSON.stringify(await t(page.evaluate('window.splitscope.sweep().then((s) => s.values.length)'))));
  console.error('guide()', JSON.stringify(await t(page.evaluate('window.splitscope.guide().then((g) => g && g.items.length)'))));
  console.error('guide text', await page.evaluate(`(() => { const t = document.body.innerText; const i = t.indexOf('Tuning guide'); return t.slice(i, i + 600); })()`));
  console.error(f, 'guide', Date.now());
  await page.evaluate('window.splitscope.ready()');
  await page.screenshot({ path: `/tmp/prof/look-${f}.png`, fullPage: true });
  const text = await page.evaluate(`document.body.innerText`);
  console.log('=====', f, '\n', text.slice(0, 3500));
}
console.log('errors', errors);
await browser.close(); await server.close();
