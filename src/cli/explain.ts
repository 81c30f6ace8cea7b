// splitscope explain FILE [--conf C] [--capacity X] [--json]: the story of the run's OOM or peak in
// plain text (trace/explain): what the memory was by category, what was reserved but unallocated and
// where, the steps and what grew over them, and the fixes, each replayed.
import type { Capacity } from '../allocator/capacity';
import { configToString } from '../allocator/config';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { CATEGORY_KEYS, CATEGORY_NAMES, categoryRecord, categorySentence } from '../trace/categories/categories';
import { explainRun, type Explanation } from '../trace/explain/explain';
import { allocationStacks } from '../trace/measures/allocation-stacks';
import { requestOfEntries } from '../trace/measures/event-rows';
import { requestTimes, timelineAnnotations } from '../trace/measures/timeline-annotations';
import { coverageCaveat } from '../trace/replay/coverage';
import { planSnapshotReplay } from '../trace/replay/replay-snapshot';
import type { SnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { noteLine } from './cli-format';

export async function explainCommand(
  file: string,
  options: { conf?: string; capacity: Capacity | null | undefined; json?: boolean },
  load: (file: string, details: boolean) => Promise<SnapshotForReplay>,
): Promise<number> {
  const { explanation, notes, conf, capacity, json } = explainAnswer(await load(file, true), options);
  if (options.json) {
    for (const note of notes) console.error(noteLine(note));
    console.log(JSON.stringify({ ...json, notes }));
    return 0;
  }
  for (const note of notes) console.log(noteLine(note));
  printExplanation(explanation, conf, capacity);
  return 0;
}

/** The explanation of a loaded snapshot under `options` (nothing printed): the command's and the MCP server's. */
export function explainAnswer({ snapshot, traces }: SnapshotForReplay, options: { conf?: string; capacity: Capacity | null | undefined }) {
  const plan = planSnapshotReplay(snapshot, {
    ...(traces[0] ? { trace: traces[0] } : {}),
    ...(options.conf !== undefined ? { conf: options.conf } : {}),
    ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
  });
  const details = traces[0]?.details;
  // The program's own marks (profiler ranges, user_metadata), where it set its steps.
  const external = snapshot.external_annotations;
  const times = external?.length ? requestTimes(plan.stream, details) : null;
  const annotations = timelineAnnotations(plan.stream, details, external, 0, times, () => requestOfEntries(plan.stream, traces[0]?.length ?? 0));
  const explanation = explainRun(plan.stream, details, allocationStacks(plan.stream, details, snapshot), {
    config: plan.config,
    addresses: plan.addresses,
    annotations,
    ...(plan.capacity ? { capacity: plan.capacity } : {}),
  });
  const conf = configToString(plan.config);
  const capacity = plan.capacity?.bytes ?? null;
  // The replay's own warnings (a free of an address no segment held) beside the plan's notes.
  const notes = [...new Set([...plan.notes, ...explanation.problems.map((p) => `Inconsistent trace: ${p}`)])];
  return { explanation, notes, conf, capacity, json: explainJson(explanation, conf, capacity) };
}

function explainJson(e: Explanation, conf: string, capacity: number | null) {
  return {
    conf,
    capacity,
    moment: e.moment,
    reserved: e.reserved,
    allocated: e.allocated,
    categories: { at_moment: categoryRecord(e.categories), at_peak: categoryRecord(e.totals.atPeak), at_end: categoryRecord(e.totals.atEnd), max: categoryRecord(e.totals.max) },
    largest_free: e.largestFree,
    held_segments: e.held,
    steps: e.steps.map((s) => ({ start: s.start, end: s.end, peak: s.peak, at_start: categoryRecord(s.atStart) })),
    leaks: e.leaks.map((l) => ({ site: l.site, frames: l.frames, category: CATEGORY_KEYS[l.category], bytes_per_step: l.bytesPerStep, blocks_per_step: l.blocksPerStep })),
    fixes: e.fixes.map((f) => ({
      kind: f.kind,
      change: f.change,
      outcome: f.outcome,
      result: { num_ooms: f.result.num_ooms, first_oom_request: f.result.first_oom_request, 'reserved_bytes.all.peak': f.result['reserved_bytes.all.peak'] },
    })),
  };
}

function printExplanation(e: Explanation, conf: string, capacity: number | null): void {
  console.log(`config:    ${conf || '(defaults)'}`);
  console.log(`capacity:  ${capacity !== null ? formatSize(capacity) : 'none'}`);
  const m = e.moment;
  if (m.kind === 'oom') console.log(`\nThe OOM: request ${grouped(m.request)} asked for ${formatSize(m.size)}.\n  ${m.message}`);
  else console.log(`\nNo OOM. The peak: the program held the most after request ${grouped(m.request)} (reserved memory peaked at ${formatSize(e.peakReserved)}).`);
  console.log(`  allocated ${formatSize(e.allocated)} of ${formatSize(e.reserved)} reserved: ${formatSize(e.reserved - e.allocated)} reserved but unallocated.`);
  console.log(`  what was allocated: ${categorySentence(e.categories)}.`);
  for (const [c, bytes] of [...e.categories].entries()) if (bytes > 0) console.log(`    ${CATEGORY_NAMES[c]!.padEnd(16)} ${formatSize(bytes).padStart(11)}`);
  if (e.largestFree.length > 0) console.log(`  largest free block: ${e.largestFree.map((f) => `${formatSize(f.bytes)} on stream ${f.stream}`).join(', ')}`);
  if (e.held.length > 0) {
    const free = e.held.reduce((a, h) => a + h.size - h.allocated, 0);
    console.log(`  ${grouped(e.held.length)} segments (${formatSize(free)} free in them) are kept from being released by a few small live blocks:`);
    for (const h of e.held.slice(0, 5)) {
      console.log(`    ${formatSize(h.size)} segment on stream ${h.stream}: ${h.blocks.map((b) => `${formatSize(b.size)} from ${b.site} (${CATEGORY_NAMES[b.category]})`).join('; ')}`);
    }
  }
  if (e.steps.length > 0) {
    console.log(`\nSteps: ${grouped(e.steps.length)}; their peaks ${e.steps.slice(0, 12).map((s) => formatSize(s.peak)).join(', ')}${e.steps.length > 12 ? ', …' : ''}.`);
    const last = e.steps.at(-1)!;
    console.log(`  alive at the start of the last: ${categorySentence(last.atStart)}.`);
  } else console.log('\nSteps: none found (no forward and backward passes in the stacks).');
  if (e.leaks.length === 0) console.log(e.steps.length >= 4 ? 'Suspected leaks: none (no site keeps more blocks step after step).' : 'Suspected leaks: too few steps to say.');
  for (const l of e.leaks) console.log(`Suspected leak: +${formatSize(l.bytesPerStep)} a step from ${l.site} (${CATEGORY_NAMES[l.category]}, ${l.blocksPerStep.toFixed(1)} blocks a step)`);
  console.log(`\nFixes, each replayed on these requests${e.fixes.length === 0 ? ': none of those tried helps.' : ':'}`);
  e.fixes.forEach((f, k) => console.log(`  ${k + 1}. ${f.change}\n     ${f.outcome}; peak reserved ${formatSize(f.result['reserved_bytes.all.peak'])}`));
  const caveat = coverageCaveat(e.coverage);
  if (caveat) console.log(`\n${caveat}`);
}
