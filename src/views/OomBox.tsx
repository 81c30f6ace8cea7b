// At an OOM, the first thing in view: which request failed, PyTorch's message (wrapped), why it failed
// in words, and the setting the tuning guide ranks first as a line to copy, with what its replay
// shows, no further than the recording reaches. An out-of-memory observer's dump opens here.
import { grouped } from '../lib/grouped';
import { useShallow } from 'zustand/react/shallow';
import { useSession, useViewKey } from '../state/session-store';
import { keyId } from '../state/view-key';
import { oomOutcome } from '../trace/replay/coverage';
import { ExportLine } from './ExportLine';
import { useGuide } from './use-guide';

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
    </section>
  );
}
