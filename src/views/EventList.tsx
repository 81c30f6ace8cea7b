// The recording's trace entries, one row each, as memory_viz's Allocator State History lists them:
// action, address, size, stream, time_us and what the program attached (compile_context,
// user_metadata). Virtualized: only the rows in view are in the DOM, fetched from the worker by
// pages, so a million entries scroll. The cursor's entry is highlighted and kept in view; a click on
// a row moves the cursor to its request.
import { hex } from '../lib/hex';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { flushSync } from 'react-dom';
import { useShallow } from 'zustand/react/shallow';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { callWorker } from '../state/replay-client';
import { derived } from '../state/derived';
import { useSession } from '../state/session-store';
import type { EventRow } from '../trace/measures/event-rows';
import { usePanel } from './use-panel';

const ROW = 20;
const VIEW_ROWS = 16;
const PAGE = 256;
/** Past this, the scroll range is scaled: browsers cap an element's height near 2^25 px. */
const MAX_SCROLL_PX = 15_000_000;


export function EventList() {
  const panel = usePanel('events');
  const { total, sourceId, entry, seek, device } = useSession(
    useShallow((s) => ({ total: s.summary?.recordedEvents ?? 0, sourceId: s.summary?.key.source ?? 0, entry: s.view?.entry ?? -1, seek: s.seek, device: s.summary?.device ?? 0 })),
  );
  const boxRef = useRef<HTMLDivElement>(null);
  const pages = useRef(new Map<number, EventRow[] | Promise<void>>());
  const [, setLoaded] = useState(0);
  const [first, setFirst] = useState(0);
  const height = Math.min(total * ROW, MAX_SCROLL_PX);
  const viewPx = VIEW_ROWS * ROW;
  const lastFirst = Math.max(0, total - VIEW_ROWS);
  // Scroll position <-> first row shown (linear, so the scrollbar's thumb says where in the trace).
  const firstAt = useCallback((top: number) => (height <= viewPx ? 0 : Math.round((top / (height - viewPx)) * lastFirst)), [height, viewPx, lastFirst]);
  const topOf = useCallback((row: number) => (lastFirst === 0 ? 0 : (row / lastFirst) * (height - viewPx)), [height, viewPx, lastFirst]);

  // A new source or device: its rows.
  useEffect(() => {
    pages.current = new Map();
    setFirst(0);
    if (boxRef.current) boxRef.current.scrollTop = 0;
  }, [sourceId, device]);

  const rowAt = (e: number): EventRow | null => {
    const page = pages.current.get(Math.floor(e / PAGE));
    return Array.isArray(page) ? (page[e % PAGE] ?? null) : null;
  };

  // The pages the rows in view need, and (once, as the list is built) its last: a jump to the end,
  // the usual one, then draws in the frame after the scroll.
  useEffect(() => {
    if (!panel.open || total === 0) return;
    const ends = pages.current.size === 0 ? [Math.floor((total - 1) / PAGE)] : [];
    for (const p of new Set([Math.floor(first / PAGE), Math.floor(Math.min(total - 1, first + VIEW_ROWS) / PAGE), ...ends])) {
      if (p < 0 || pages.current.has(p)) continue;
      const store = pages.current;
      store.set(
        p,
        derived.fetchQuery({ queryKey: ['events', sourceId, device, p], queryFn: () => callWorker((w) => w.events({ source: sourceId, ...(device ? { device } : {}) }, p * PAGE, PAGE)), gcTime: 30_000 }).then(
          (rows) => {
            if (pages.current !== store) return;
            store.set(p, rows);
            setLoaded((n) => n + 1);
          },
          () => void store.delete(p),
        ),
      );
    }
  }, [first, total, panel.open, sourceId, device]);

  // The cursor's entry stays in view (unless the user is looking elsewhere on purpose: only when it left the view).
  useLayoutEffect(() => {
    if (!panel.open || entry < 0 || !boxRef.current) return;
    if (entry >= first && entry < first + VIEW_ROWS) return;
    const row = Math.max(0, Math.min(lastFirst, entry - Math.floor(VIEW_ROWS / 2)));
    boxRef.current.scrollTop = topOf(row);
    setFirst(row);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [entry, panel.open]);

  const shown: number[] = [];
  for (let e = first; e < Math.min(total, first + VIEW_ROWS + 1); e++) shown.push(e);
  return (
    <details className="events" {...panel}>
      <summary>Recorded events{total > 0 ? ` (${total.toLocaleString()})` : ''}</summary>
      {panel.open && total === 0 && <p className="hint">This source has no recorded trace to list.</p>}
      {panel.open && total > 0 && (
        <div className="events-table" role="table" aria-label="Recorded trace entries" aria-rowcount={total}>
          <div className="events-row events-head" role="row">
            <span role="columnheader">#</span>
            <span role="columnheader">action</span>
            <span role="columnheader">address</span>
            <span role="columnheader">size</span>
            <span role="columnheader">stream</span>
            <span role="columnheader" title="Since the trace's first entry; hover a row for its time_us">time (ms)</span>
            <span role="columnheader">request</span>
            <span role="columnheader">context</span>
          </div>
          <div className="events-scroll" ref={boxRef} style={{ height: viewPx }} onScroll={(e) => {
              // Rendered in the scroll event itself, before this frame paints: no frame of stale rows.
              const top = e.currentTarget.scrollTop;
              flushSync(() => setFirst(firstAt(top)));
            }}>
            <div style={{ height, position: 'relative' }}>
              <div className="events-rows" style={{ position: 'sticky', top: 0 }}>
                {shown.map((e) => {
                  const r = rowAt(e);
                  const context = r ? [r.compileContext, r.userMetadata].filter(Boolean).join(' · ') : '';
                  return (
                    <div
                      key={e}
                      role="row"
                      aria-rowindex={e + 1}
                      aria-selected={e === entry}
                      className={`events-row${e === entry ? ' current' : ''}${r?.action === 'oom' ? ' oom-row' : ''}`}
                      onClick={() => r && r.request >= 0 && seek(r.request)}
                      title={r && r.request >= 0 ? `Move the cursor to request ${grouped(r.request)}` : undefined}
                    >
                      <span role="cell">{grouped(e)}</span>
                      <span role="cell">{r?.action ?? '…'}</span>
                      <span role="cell">{r ? (r.action === 'oom' ? `free ${formatSize(r.addr)}` : hex(r.addr)) : ''}</span>
                      <span role="cell">{r ? formatSize(r.size) : ''}</span>
                      <span role="cell">{r ? r.stream : ''}</span>
                      <span role="cell" title={r && !Number.isNaN(r.time) ? `time_us ${r.time}` : undefined}>
                        {r && !Number.isNaN(r.since) ? (r.since / 1000).toLocaleString(undefined, { minimumFractionDigits: 3, maximumFractionDigits: 3 }) : ''}
                      </span>
                      <span role="cell">{r && r.request >= 0 ? grouped(r.request) : ''}</span>
                      <span role="cell" title={context}>
                        {context}
                      </span>
                    </div>
                  );
                })}
              </div>
            </div>
          </div>
        </div>
      )}
    </details>
  );
}
