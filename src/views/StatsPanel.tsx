// Numbers at the cursor and at the end: memory_stats() names, fragmentation, the cudaMalloc churn and
// the OOMs of the replay, each term explained on hover and in "What these mean". The figures are the
// replay's on screen; while the current key's is on its way they are marked as updating.
import { useMemo } from 'react';
import { grouped } from '../lib/grouped';
import { formatSize } from '../allocator/format-size';
import { usePanel } from './use-panel';
import { useShallow } from 'zustand/react/shallow';
import { useSession, useViewKey } from '../state/session-store';
import { keyId, sourceKeyOf } from '../state/view-key';
import { GLOSSARY, type Term } from './glossary';
import { useDelayed } from './use-delayed';
import { useMemoryKinds } from './use-memory-kinds';
import { useRovingFocus } from './use-roving-focus';
import { bytesByCategoryIn, CATEGORY_NAMES, categorySentence } from '../trace/categories/categories';
import type { MemoryLayout } from '../trace/measures/memory-layout';

const BYTE_ROWS: [string, Term][] = [
  ['allocated_bytes.all.current', 'allocated'],
  ['reserved_bytes.all.current', 'reserved'],
  ['active_bytes.all.current', 'active'],
  ['inactive_split_bytes.all.current', 'inactive split'],
  ['allocated_bytes.all.peak', 'allocated, peak'],
  ['reserved_bytes.all.peak', 'reserved, peak'],
];
const COUNT_ROWS: [string, Term][] = [
  ['num_device_alloc', 'cudaMalloc calls'],
  ['num_device_free', 'cudaFree calls'],
  ['num_alloc_retries', 'retries (cache flushed)'],
  ['num_ooms', 'OOMs'],
];
const TERMS: Term[] = ['request', ...BYTE_ROWS.map(([, t]) => t), 'reserved − allocated', 'largest free block', 'external fragmentation', ...COUNT_ROWS.map(([, t]) => t), 'segment', 'stream', 'cap'];

/** A term with its explanation on hover (and by keyboard focus: the panel's terms are one tab stop,
 * use-roving-focus.ts sets each one's tabIndex). */
export function TermLabel({ term }: { term: Term }) {
  return (
    <span className="term" title={GLOSSARY[term]}>
      {term}
    </span>
  );
}

/** A memory_stats() figure at the cursor and at the end. */
function StatRow({ stat, term, at, end, format }: { stat: string; term: Term; at: Record<string, number>; end: Record<string, number>; format(v: number): string }) {
  return (
    <tr>
      <th scope="row">
        <TermLabel term={term} />
      </th>
      <td data-stat={stat} data-value={at[stat]} title={stat}>
        {format(at[stat] ?? 0)}
      </td>
      <td data-end-stat={stat} data-value={end[stat]}>
        {format(end[stat] ?? 0)}
      </td>
    </tr>
  );
}

export function StatsPanel() {
  const { summary, view, seek } = useSession(
    // Only what this panel shows: the store changes often (busy, cursor) and other panels need not redraw.
    useShallow((s) => ({ summary: s.summary, view: s.view, seek: s.seek })),
  );
  const key = useViewKey();
  const panel = usePanel('ooms');
  const current = !!summary && !!view && keyId(view.key) === keyId(key) && keyId(summary.key) === keyId(key);
  const dim = useDelayed(!current);
  const kinds = useMemoryKinds();
  const terms = useRovingFocus<HTMLElement>('.term');
  if (!summary || !view) return <section className="stats-panel" aria-label="Stats" />;
  const at = view.stats;
  const end = summary.stats;
  const f = view.fragmentation;
  const atEnd = view.cursor === summary.requests - 1;
  return (
    <section className={`stats-panel${dim ? ' updating' : ''}`} aria-label="Stats" aria-busy={!current} data-key={keyId(view.key)} {...terms}>
      <h2>
        After request {grouped(view.cursor)}
        {atEnd ? ' (the end)' : ''}
        {dim && <span className="hint"> · updating…</span>}
      </h2>
      <table className="stats">
        <thead>
          <tr>
            <th />
            <th scope="col">cursor</th>
            <th scope="col">end</th>
          </tr>
        </thead>
        <tbody>
          {BYTE_ROWS.map(([key, term]) => (
            <StatRow key={key} stat={key} term={term} at={at} end={end} format={formatSize} />
          ))}
          {(
            [
              ['reserved − allocated', formatSize(f.reservedMinusAllocated)],
              ['largest free block', formatSize(f.largestFreeBlock)],
              ['external fragmentation', `${(f.externalRatio * 100).toFixed(1)}%`],
            ] as const
          ).map(([term, text]) => (
            <tr key={term}>
              <th scope="row">
                <TermLabel term={term} />
              </th>
              <td>{text}</td>
              <td />
            </tr>
          ))}
          {COUNT_ROWS.map(([key, term]) => (
            <StatRow key={key} stat={key} term={term} at={at} end={end} format={grouped} />
          ))}
        </tbody>
      </table>
      {kinds && kinds.of.length > 0 && keyId(sourceKeyOf(view.key)) === keyId(sourceKeyOf(summary.key)) && <MemoryKinds of={kinds.of} layout={view.layout} peakRequest={kinds.peakRequest} atPeak={kinds.atPeak} seek={seek} />}
      {summary.ooms.length > 0 && (
        <details className="ooms" {...panel}>
          <summary>
            {summary.ooms.length} OOM{summary.ooms.length > 1 ? 's' : ''} in this replay
          </summary>
          <ul>
            {summary.ooms.slice(0, 20).map((o) => (
              <li key={o.request} data-request={o.request}>
                <button className="link" onClick={() => seek(o.request)}>
                  request {grouped(o.request)}
                </button>
                : <span className="oom">{o.message}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
      <details className="glossary">
        <summary>What these mean</summary>
        <dl>
          {TERMS.map((t) => (
            <div key={t}>
              <dt>{t}</dt>
              <dd>{GLOSSARY[t]}</dd>
            </div>
          ))}
        </dl>
      </details>
    </section>
  );
}

/** What is allocated at the cursor by category (requested bytes of the blocks the cursor's state holds
 * for the program), and at the moment the program held the most. */
function MemoryKinds({ of, layout, peakRequest, atPeak, seek }: { of: Uint8Array; layout: MemoryLayout; peakRequest: number; atPeak: Float64Array; seek(i: number): void }) {
  const bytes = useMemo(() => bytesByCategoryIn(layout, of), [layout, of]);
  const at = (c: number): number => bytes[c]!;
  const total = bytes.reduce((x, y) => x + y, 0);
  return (
    <section className="memory-kinds-stats" aria-label="What the memory is">
      <h3>
        <span className="term" title="Requested bytes of the allocations alive at the cursor, by what they are: from the phase of the program each was made and freed in (forward, backward, the optimizer step, model setup), read from its stack.">
          What is allocated, by category
        </span>
      </h3>
      <table className="stats">
        <tbody>
          {CATEGORY_NAMES.map((name, c) =>
            at(c) > 0 ? (
              <tr key={name} data-category={c}>
                <th scope="row">
                  <span className={`cat-swatch cat-${c}`} />
                  {name}
                </th>
                <td data-bytes={at(c)}>{formatSize(at(c))}</td>
                <td>{total > 0 ? `${Math.round((at(c) / total) * 100)}%` : ''}</td>
              </tr>
            ) : null,
          )}
        </tbody>
      </table>
      {peakRequest >= 0 && (
        <p className="hint memory-kinds-peak">
          At the peak (
          <button className="link" onClick={() => seek(peakRequest)}>
            request {grouped(peakRequest)}
          </button>
          ): {categorySentence(atPeak)}.
        </p>
      )}
    </section>
  );
}
