// npm test: type check, unit + conformance tests (Node), then browser tests in real Chromium.
// The browser suite needs a display for WebGPU canvases: without one it runs under xvfb-run.
// Ends with one "N passed, N failed" line summing both suites.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const results = 'test-results';
rmSync(results, { recursive: true, force: true });
mkdirSync(results, { recursive: true });
let passed = 0;
let failed = 0;

function run(step, cmd, args) {
  console.log(`\n== ${step}: ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  return r.status === 0;
}

function count(file) {
  if (!existsSync(file)) return false;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests + (report.numTotalTestSuites > 0 && report.success === false && report.numFailedTests === 0 ? 1 : 0);
  return true;
}

function finish(ok) {
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(ok && failed === 0 ? 0 : 1);
}

const npx = 'npx';
if (!run('type check', npx, ['tsc', '--noEmit', '-p', '.'])) {
  failed++;
  finish(false);
}
const reporters = (name) => ['--reporter=default', '--reporter=json', `--outputFile.json=${results}/${name}.json`];
const nodeOk = run('unit and conformance tests', npx, ['vitest', 'run', ...reporters('node')]);
if (!count(`${results}/node.json`)) failed++;
if (!run('build the page', npx, ['vite', 'build', '--logLevel', 'warn'])) {
  failed++;
  finish(false);
}
const browser = [npx, 'vitest', 'run', '--config', 'tests/browser/vitest.config.ts', ...reporters('browser')];
const browserOk =
  !process.env.DISPLAY && existsSync('/usr/bin/xvfb-run')
    ? run('browser tests (Xvfb)', 'xvfb-run', ['-a', '--server-args=-screen 0 1920x1080x24', ...browser])
    : run('browser tests', browser[0], browser.slice(1));
if (!count(`${results}/browser.json`)) failed++;
finish(nodeOk && browserOk);
