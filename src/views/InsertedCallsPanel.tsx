// Inserted calls: what the user puts into the run, torch.cuda.empty_cache() or reset_peak_memory_stats() after the
// request at the cursor, or empty_cache() every N steps of a generated workload; each listed, removable.
import { useId, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { useSession } from '../state/session-store';
import { grouped } from '../lib/grouped';

type Kind = 'empty' | 'peak';
const CALL: Record<Kind, string> = { empty: 'torch.cuda.empty_cache()', peak: 'torch.cuda.reset_peak_memory_stats()' };

export function InsertedCallsPanel() {
  const { summary, cursor, settings, setInsertedCalls, seek } = useSession(
    useShallow((s) => ({ summary: s.summary, cursor: s.cursor, settings: s.settings, setInsertedCalls: s.setInsertedCalls, seek: s.seek })),
  );
  const everyId = useId();
  const [every, setEvery] = useState(5);
  if (!summary) return null;
  const empty = settings.emptyCacheAfter ?? [];
  const peak = settings.resetPeakAfter ?? [];
  const steps = summary.stepStarts;
  const apply = (e: number[], p: number[]) => setInsertedCalls({ emptyCacheAfter: e, resetPeakAfter: p });
  const inserted: [Kind, number][] = [...empty.map((i) => ['empty', i] as [Kind, number]), ...peak.map((i) => ['peak', i] as [Kind, number])].sort(
    (a, b) => a[1] - b[1],
  );
  return (
    <section className="inserted-calls" aria-label="Insert calls into the run">
      <span>After request {grouped(cursor)}:</span>
      <button onClick={() => apply([...empty, cursor], peak)} title="Release every cached block that holds no allocation, here">
        Insert empty_cache()
      </button>
      <button onClick={() => apply(empty, [...peak, cursor])} title="Peaks start again from the current values, here">
        Insert reset_peak_memory_stats()
      </button>
      {steps.length > 1 && (
        <span className="every">
          <label htmlFor={everyId}>every</label>
          <input id={everyId} type="number" min={1} max={steps.length} value={every} onChange={(e) => setEvery(Math.max(1, Math.round(Number(e.target.value)) || 1))} />
          <span>steps</span>
          <button
            onClick={() => {
              // After the last request of every `every`-th step.
              const ends: number[] = [];
              for (let k = every; k < steps.length; k += every) ends.push(steps[k]! - 1);
              apply([...empty, ...ends], peak);
            }}
          >
            Insert empty_cache() every {every} steps
          </button>
        </span>
      )}
      {inserted.length > 0 && (
        <ul className="inserted" aria-label="Inserted calls">
          {inserted.map(([kind, at]) => (
            <li key={`${kind}${at}`}>
              <button className="link" onClick={() => seek(at)} title="Move the cursor there">
                <code>{CALL[kind]}</code> after {grouped(at)}
              </button>
              <button
                className="link"
                aria-label={`Remove ${CALL[kind]} after request ${at}`}
                onClick={() => apply(kind === 'empty' ? empty.filter((i) => i !== at) : empty, kind === 'peak' ? peak.filter((i) => i !== at) : peak)}
              >
                ×
              </button>
            </li>
          ))}
          <li>
            <button className="link" onClick={() => apply([], [])}>
              remove all
            </button>
          </li>
        </ul>
      )}
    </section>
  );
}
