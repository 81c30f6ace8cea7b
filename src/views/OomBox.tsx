// At an OOM, the first thing in view: which request failed, PyTorch's message (wrapped), why it failed
// in words, and the setting the tuning guide ranks first as a line to copy, with what its replay
// shows, no further than the recording reaches; then what the memory was and every fix that helps,
// each replayed (splitscope explain's list). An out-of-memory observer's dump opens here.
import { grouped } from '../lib/grouped';
import { useShallow } from 'zustand/react/shallow';
import { useSession, useViewKey } from '../state/session-store';
import { keyId } from '../state/view-key';
import { oomOutcome } from '../trace/replay/coverage';
import { ExportLine } from './ExportLine';
import { useGuide } from './use-guide';
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { formatSize } from '../allocator/format-size';
import { failure } from '../state/derived';
import { EXPLAIN_AT_ONCE, explainQuery } from '../state/memory-kinds';
import { CATEGORY_NAMES, categorySentence } from '../trace/categories/categories';

export function OomBox() {
  const { view, summary } = useSession(useShallow((s) => ({ view: s.view, summary: s.summary })));
  const key = useViewKey();
  const atOom = view?.oom != null && summary !== null && keyId(view.key) === keyId(key);
  const { guide, pending } = useGuide(atOom);
  if (!atOom || !view || !summary) return null;
  const endsHere = summary.coverage.endsAtOom === view.cursor;
  const first = guide?.items[0];
  return (
    <section className="oom-box" role="note" aria-label="Why this request failed" data-key={keyId(view.key)} data-request={view.cursor}>
      <h2>Request {grouped(view.cursor)} failed: CUDA out of memory</h2>
      <p className="oom oom-message">{view.oom}</p>
      <ul className="oom-why">
        {view.oomWhy.map((w) => (
          <li key={w}>{w}</li>
        ))}
      </ul>
      <p className="hint">
        PyTorch raises <code>torch.OutOfMemoryError</code> here.
        {endsHere && ' The recording ends at this request (an out-of-memory observer dumped it): what the program did after it was never recorded.'}
      </p>
      {pending && <p className="hint updating">Replaying the settings worth trying…</p>}
      {first?.helps && (
        <div className="oom-fix" data-conf={first.conf}>
          <strong>Ranked first by the tuning guide:</strong> <code>{first.conf || '(defaults)'}</code>: {oomOutcome(first.row.first_oom_request, guide!.coverage)}
          {summary.coverage.endsAtOom !== null && first.row.first_oom_request === null && '; whether the run would then have finished is unknown'}.
          <ExportLine conf={first.conf} />
        </div>
      )}
      {guide && !first?.helps && <p className="hint">None of the settings the tuning guide tries does better here.</p>}
      <OomExplained requests={summary.requests} />
    </section>
  );
}

/** What the memory was at the OOM, where the free memory sat, and every fix that helps, each replayed
 * (trace/explain: what `splitscope explain` prints). A long trace's fixes wait to be asked for. */
function OomExplained({ requests }: { requests: number }) {
  const key = useViewKey();
  const [asked, setAsked] = useState(false);
  const q = useQuery({ ...explainQuery(key), enabled: asked || requests <= EXPLAIN_AT_ONCE });
  const e = q.data;
  if (failure(q.error)) return <p className="error">{failure(q.error)}</p>;
  if (!e) {
    return asked || requests <= EXPLAIN_AT_ONCE ? (
      <p className="hint updating">Explaining: what the memory was, and replaying the fixes…</p>
    ) : (
      <button onClick={() => setAsked(true)}>What was the memory, and what would have avoided it? (replays {grouped(requests)} requests a dozen times)</button>
    );
  }
  const heldFree = e.held.reduce((a, h) => a + h.size - h.allocated, 0);
  // Folded: the request, PyTorch's message and why stay in view above it.
  return (
    <details className="oom-explained" data-key={keyId(key)}>
      <summary>
        What the memory was ({categorySentence(e.categories)}), and {e.fixes.length === 0 ? 'no fix that helps' : `${e.fixes.length} fix${e.fixes.length > 1 ? 'es' : ''} checked by replay`}
      </summary>
      <p>
        <strong>What was allocated:</strong> {categorySentence(e.categories)}. {formatSize(e.reserved - e.allocated)} was reserved but unallocated
        {e.largestFree.length > 0 && ` (largest free block ${e.largestFree.map((f) => formatSize(f.bytes)).join(', ')})`}
        {e.held.length > 0 && `; ${grouped(e.held.length)} segments with ${formatSize(heldFree)} free in them are held by a few small live blocks, e.g. ${e.held[0]!.blocks.map((b) => `${formatSize(b.size)} from ${b.site}`).join(', ')}`}.
      </p>
      {e.leaks.map((l) => (
        <p key={l.site} className="oom-leak">
          <strong>Suspected leak:</strong> +{formatSize(l.bytesPerStep)} a step from <code>{l.site}</code> ({CATEGORY_NAMES[l.category]}).
        </p>
      ))}
      {e.fixes.length > 0 ? (
        <>
          <p>
            <strong>Fixes, each replayed on these requests:</strong>
          </p>
          <ol className="oom-fixes">
            {e.fixes.map((f) => (
              <li key={f.change} data-kind={f.kind} data-first-oom={f.result.first_oom_request ?? ''}>
                {f.conf !== undefined ? <code>{f.conf || '(defaults)'}</code> : f.change}: {f.outcome}; peak reserved {formatSize(f.result['reserved_bytes.all.peak'])}
                {f.conf !== undefined && <ExportLine conf={f.conf} />}
              </li>
            ))}
          </ol>
        </>
      ) : (
        <p className="hint">None of the fixes tried (settings, empty_cache() at each step, freeing a site at the end of its step) avoids this OOM or moves it later.</p>
      )}
    </details>
  );
}
