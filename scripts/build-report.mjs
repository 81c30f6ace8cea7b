// Builds the page as one self-contained HTML template for `splitscope report` (build/report/page.html):
// the app and its CSS inline, and each worker's whole source as a string the page starts from a Blob
// (state/workers.ts), because a page opened from file:// can load no script beside it. The CLI puts
// the snapshot in the template's SNAPSHOT slot.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rawImports } from './raw-import-plugin.mjs';

const common = {
  bundle: true,
  write: false,
  minify: true,
  format: 'iife',
  target: 'es2022',
  platform: 'browser',
  logLevel: 'warning',
  plugins: [rawImports],
  // Vite's names: the report's page has no base to fetch from; import.meta.url is never read (the
  // workers come from Blobs), but esbuild wants a value for it in a classic script.
  define: { 'import.meta.env.BASE_URL': '"./"', 'import.meta.url': '"file:///"', 'process.env.NODE_ENV': '"production"' },
};

/** A script's text made safe inside <script>...</script>. */
const inScript = (js) => js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

const WORKERS = { replay: 'src/worker/replay-worker.ts', hash: 'src/worker/hash-worker.ts', sweep: 'src/worker/sweep-worker.ts', digest: 'src/worker/digest-worker.ts', planner: 'src/gpu/stress/planner-worker.ts' };
const workers = {};
for (const [kind, entry] of Object.entries(WORKERS)) {
  const out = await build({ ...common, entryPoints: [entry] });
  workers[kind] = out.outputFiles[0].text;
}
const app = await build({ ...common, entryPoints: ['src/main.tsx'], outdir: 'build/report/tmp', loader: { '.css': 'css' } });
const js = app.outputFiles.find((f) => f.path.endsWith('.js')).text;
const css = app.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
const title = /<title>(.*?)<\/title>/.exec(readFileSync('index.html', 'utf8'))[1];
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="UTF-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0" />
<title>__TITLE__ · ${title}</title>
<link rel="icon" href="data:," />
<style>${css.replace(/<\/(style)/gi, '<\\/$1')}</style>
</head>
<body>
<div id="root"></div>
__SNAPSHOT__
<script>window.__SPLITSCOPE_WORKERS__ = ${inScript(JSON.stringify(workers))};</script>
<script>${inScript(js)}</script>
</body>
</html>
`;
mkdirSync('build/report', { recursive: true });
writeFileSync('build/report/page.html', html);
console.log(`build/report/page.html: ${(html.length / 2 ** 20).toFixed(1)} MiB`);
