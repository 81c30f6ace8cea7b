// A run with no OOM: what `splitscope explain` says of its peak, on the page for every recording. What the
// memory was at the peak, the segments held by a few small blocks, the steps and their peaks, suspected
// leaks (each can be marked: its blocks on the map, its bytes on the timeline, through the stack
// selection), and the fixes, each replayed. A leak needs no OOM to be worth seeing.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { failure } from '../state/derived';
import { EXPLAIN_AT_ONCE, explainQuery } from '../state/memory-kinds';
import { useSession, useViewKey } from '../state/session-store';
import { useStacks } from '../state/stack-store';
import { keyId } from '../state/view-key';
import { CATEGORY_NAMES, categorySentence } from '../trace/categories/categories';
import { oomOutcome } from '../trace/replay/coverage';
import { ExportLine } from './ExportLine';

/** "no OOM through request N, ..." as a sentence's start: never more than the recording covers. */
const cap = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

export function PeakStory() {
  const { summary, setPanelOpen } = useSession(useShallow((s) => ({ summary: s.summary, setPanelOpen: s.setPanelOpen })));
  const key = useViewKey();
  const [asked, setAsked] = useState(false);
  const noOom = summary !== null && summary.ooms.length === 0 && keyId(summary.key) === keyId(key);
  const q = useQuery({ ...explainQuery(key), enabled: noOom && (asked || summary!.requests <= EXPLAIN_AT_ONCE) });
  const { selection, select } = useStacks(useShallow((s) => ({ selection: s.selection, select: s.select })));
  if (!noOom || !summary) return null;
  const e = q.data;
  const body = failure(q.error) ? (
    <p className="error">{failure(q.error)}</p>
  ) : !e ? (
    asked || summary.requests <= EXPLAIN_AT_ONCE ? (
      <p className="hint updating">Explaining the peak: what the memory was, leaks, and replaying the fixes…</p>
    ) : (
      <button onClick={() => setAsked(true)}>What was the memory at the peak, and does anything leak? (replays {grouped(summary.requests)} requests a dozen times)</button>
    )
  ) : (
    <>
      <p>
        {cap(oomOutcome(null, summary.coverage))}. At its peak (after request {grouped(e.moment.request)}) the program held {formatSize(e.allocated)} of {formatSize(e.reserved)} reserved ({formatSize(e.reserved - e.allocated)} reserved but
        unallocated): {categorySentence(e.categories)}.
        {e.held.length > 0 &&
          ` ${grouped(e.held.length)} segment${e.held.length > 1 ? 's are' : ' is'} held by a few small live blocks, e.g. ${e.held[0]!.blocks.map((b) => `${formatSize(b.size)} from ${b.site}`).join(', ')}.`}
      </p>
      {e.steps.length > 1 && (
        <p className="peak-steps">
          {grouped(e.steps.length)} steps; their peaks {e.steps.slice(0, 12).map((s) => formatSize(s.peak)).join(', ')}
          {e.steps.length > 12 ? ', …' : ''}.
        </p>
      )}
      {e.leaks.map((l) => {
        const marked = selection !== null && 'site' in selection && selection.site === l.site;
        return (
          <p key={l.site} className="peak-leak" data-site={l.site}>
            <strong>Suspected leak:</strong> +{formatSize(l.bytesPerStep)} a step from <code>{l.site}</code> ({CATEGORY_NAMES[l.category]}, {l.blocksPerStep.toFixed(1)} blocks a
            step).{' '}
            <button className="link" aria-pressed={marked} onClick={() => {
                // The stack view holds the selection: open, it marks the blocks on the map and the bytes on the timeline.
                if (!marked) setPanelOpen('stacks', true);
                select(marked ? null : { site: l.site });
              }} title="Mark its blocks on the map and its bytes on the timeline">
              {marked ? 'unmark' : 'mark its blocks'}
            </button>
          </p>
        );
      })}
      {e.fixes.length > 0 && (
        <details className="peak-fixes">
          <summary>
            {e.fixes.length} fix{e.fixes.length > 1 ? 'es' : ''}, each replayed on these requests
          </summary>
          <ol>
            {e.fixes.map((f) => (
              <li key={f.change} data-kind={f.kind} data-peak-reserved={f.result['reserved_bytes.all.peak']}>
                {f.conf !== undefined ? <code>{f.conf || '(defaults)'}</code> : f.change}: {f.outcome}; peak reserved {formatSize(f.result['reserved_bytes.all.peak'])}
                {f.conf !== undefined && <ExportLine conf={f.conf} />}
              </li>
            ))}
          </ol>
        </details>
      )}
    </>
  );
  return (
    <section className="peak-story" aria-label="The story of the peak" data-key={e ? keyId(key) : undefined} aria-busy={!e}>
      <h2>The peak{e && e.leaks.length > 0 ? `, and ${e.leaks.length === 1 ? 'a suspected leak' : `${e.leaks.length} suspected leaks`}` : ''}</h2>
      {body}
    </section>
  );
}
