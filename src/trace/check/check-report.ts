// A gate's result in the forms CI reads: plain text, JSON, JUnit XML (one test case per limit),
// GitHub Actions workflow commands (an ::error:: line per broken limit), and Markdown for a pull
// request comment.
import { formatSize } from '../../allocator/format-size';
import { grouped } from '../../lib/grouped';
import { CATEGORY_KEYS, CATEGORY_NAMES } from '../categories/categories';
import type { CheckResult, RunSummary } from './check';

const signed = (bytes: number): string => (bytes === 0 ? '0 B' : `${bytes > 0 ? '+' : '−'}${formatSize(Math.abs(bytes))}`);
const change = (a: number, b: number): string => `${signed(b - a)}${a > 0 ? ` (${b >= a ? '+' : ''}${(((b - a) / a) * 100).toFixed(1)}%)` : ''}`;
/** A note that says the file contradicts itself: a warning wherever the result goes. */
const INCONSISTENT = (note: string): boolean => note.startsWith('Inconsistent trace:');

const oomText = (r: RunSummary): string => (r.firstOom === null ? 'none' : `request ${grouped(r.firstOom)}`);

/** The figures side by side: [name, baseline, new, change]. */
function rows(r: CheckResult): string[][] {
  const a = r.baseline;
  const b = r.new;
  const out = [
    ['peak reserved', formatSize(a.peakReserved), formatSize(b.peakReserved), change(a.peakReserved, b.peakReserved)],
    ['peak allocated', formatSize(a.peakAllocated), formatSize(b.peakAllocated), change(a.peakAllocated, b.peakAllocated)],
    ['reserved − allocated at the peak', formatSize(a.gapAtPeak), formatSize(b.gapAtPeak), change(a.gapAtPeak, b.gapAtPeak)],
    ['first OOM', oomText(a), oomText(b), ''],
    ['cudaMalloc + cudaFree calls', grouped(a.churn), grouped(b.churn), `${b.churn - a.churn >= 0 ? '+' : ''}${grouped(b.churn - a.churn)}`],
  ];
  CATEGORY_KEYS.forEach((k, c) => {
    if (a.categories[k] > 0 || b.categories[k] > 0) out.push([`${CATEGORY_NAMES[c]} (largest total)`, formatSize(a.categories[k]), formatSize(b.categories[k]), change(a.categories[k], b.categories[k])]);
  });
  return out;
}

export function checkText(r: CheckResult): string {
  const table = [['', r.baseline.name, r.new.name, 'change'], ...rows(r)];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const lines = table.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  lines.unshift(`config: ${r.baseline.conf || '(defaults)'}${r.new.conf !== r.baseline.conf ? ` and ${r.new.conf || '(defaults)'}` : ''}`);
  if (r.sites.length > 0) {
    lines.push('', 'allocation sites at the peak, most changed:');
    for (const s of r.sites.slice(0, 8)) lines.push(`  ${signed(s.new - s.baseline).padStart(12)}  ${s.site}`);
  }
  lines.push('');
  for (const run of [r.baseline, r.new]) for (const note of run.notes) lines.push(`${INCONSISTENT(note) ? 'warning' : 'note'}: ${run.name}: ${note}`);
  if (r.limits.length === 0) lines.push('no limits given: nothing to pass or fail (see --max-peak-reserved, --max-peak-allocated, --category, --no-new-oom)');
  for (const l of r.limits) lines.push(`${l.passed ? 'PASS' : 'FAIL'}  ${l.message}`);
  if (r.limits.length > 0) lines.push(r.passed ? 'passed' : `failed: ${r.limits.filter((l) => !l.passed).length} of ${r.limits.length} limits`);
  return lines.join('\n');
}

export function checkJson(r: CheckResult) {
  const run = (s: RunSummary) => ({
    name: s.name,
    conf: s.conf,
    'reserved_bytes.all.peak': s.peakReserved,
    'allocated_bytes.all.peak': s.peakAllocated,
    num_ooms: s.ooms,
    first_oom_request: s.firstOom,
    churn: s.churn,
    reserved_minus_allocated_at_peak: s.gapAtPeak,
    categories: { max: s.categories },
    notes: s.notes,
  });
  return {
    passed: r.passed,
    baseline: run(r.baseline),
    new: run(r.new),
    limits: r.limits,
    sites: r.sites.slice(0, 20),
  };
}

const xml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** JUnit XML: a test suite with one test case per limit, a failure for each broken one. */
export function checkJunit(r: CheckResult): string {
  const failures = r.limits.filter((l) => !l.passed).length;
  const cases = r.limits.map((l) => {
    const open = `    <testcase classname="splitscope.check" name="${xml(`${l.name} ${l.limit}`)}" time="0">`;
    return l.passed ? `${open}</testcase>` : `${open}\n      <failure message="${xml(l.message)}" type="limit">${xml(l.message)}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="splitscope check" tests="${r.limits.length}" failures="${failures}">`,
    `  <testsuite name="${xml(`splitscope check ${r.baseline.name} ${r.new.name}`)}" tests="${r.limits.length}" failures="${failures}" errors="0" skipped="0">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** GitHub Actions workflow commands: an error per broken limit, a notice when all hold. */
export function checkAnnotations(r: CheckResult): string[] {
  // A command's data escapes %, CR and LF; its properties also : and ,.
  const data = (s: string): string => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const prop = (s: string): string => data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
  const out = r.limits.filter((l) => !l.passed).map((l) => `::error title=${prop(`splitscope check: ${l.name}`)}::${data(l.message)}`);
  for (const run of [r.baseline, r.new]) {
    for (const note of run.notes.filter(INCONSISTENT)) out.push(`::warning title=${prop(`splitscope check: ${run.name}`)}::${data(note)}`);
  }
  if (r.limits.length > 0 && r.passed) out.push(`::notice title=${prop('splitscope check')}::${data(`all ${r.limits.length} memory limits hold`)}`);
  return out;
}

/** Markdown for a pull request comment: the verdict, the limits, the figures side by side. */
export function checkMarkdown(r: CheckResult): string {
  const cell = (s: string): string => s.replace(/\|/g, '\\|');
  const lines = [
    `### splitscope check: ${r.limits.length === 0 ? 'no limits given' : r.passed ? '✅ passed' : `❌ ${r.limits.filter((l) => !l.passed).length} of ${r.limits.length} limits broken`}`,
    '',
  ];
  if (r.limits.length > 0) {
    lines.push('| | limit | result |', '|---|---|---|');
    for (const l of r.limits) lines.push(`| ${l.passed ? '✅' : '❌'} ${cell(l.name)} | ${cell(l.limit)} | ${cell(l.message)} |`);
    lines.push('');
  }
  const warnings = [r.baseline, r.new].flatMap((run) => run.notes.filter(INCONSISTENT).map((n) => `- ⚠️ \`${cell(run.name)}\`: ${cell(n)}`));
  if (warnings.length > 0) lines.push(...warnings, '');
  lines.push(`| | \`${cell(r.baseline.name)}\` | \`${cell(r.new.name)}\` | change |`, '|---|---:|---:|---:|');
  for (const row of rows(r)) lines.push(`| ${row.map(cell).join(' | ')} |`);
  if (r.sites.length > 0) {
    lines.push('', '<details><summary>Allocation sites at the peak, most changed</summary>', '', '| change | site |', '|---:|---|');
    for (const s of r.sites.slice(0, 10)) lines.push(`| ${signed(s.new - s.baseline)} | \`${cell(s.site)}\` |`);
    lines.push('', '</details>');
  }
  return `${lines.join('\n')}\n`;
}
