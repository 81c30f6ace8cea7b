// The tuning guide: the settings worth trying on this run, each with its replayed figures and why.
import { counted } from '../lib/counted';
import { formatSize } from '../allocator/format-size';
import { usePanel } from './use-panel';
import { useGuide } from '../state/guide-store';
import { useSession } from '../state/session-store';

export function TuningGuide() {
  const { guide: built, source, error, unavailable } = useGuide();
  // Figures replayed on another source than the one in view are never shown beside it.
  const current = useSession((s) => s.summary?.source ?? null);
  const guide = source === current ? built : null;
  const panel = usePanel('guide');
  return (
    <details className="guide" data-source={guide ? source : undefined} {...panel}>
      <summary>Tuning guide for this run</summary>
      {error && <p className="error">{error}</p>}
      {unavailable && <p className="hint">{unavailable}</p>}
      {!guide && !error && !unavailable && <p className="hint">Replaying the settings worth trying…</p>}
      {guide && (
        <>
          <p className="hint">
            Each setting below was replayed on this source, on top of the current config <code>{guide.current.conf || '(defaults)'}</code> (peak
            reserved {formatSize(guide.current['reserved_bytes.all.peak'])}, {counted(guide.current.num_ooms, 'OOM')}).
          </p>
          <ol className="guide-items">
            {guide.items.map((item) => (
              <li key={item.kind} className={item.helps ? 'helps' : 'not-here'} data-conf={item.conf} data-peak={item.row['reserved_bytes.all.peak']} data-ooms={item.row.num_ooms}>
                <code>{item.conf || '(defaults)'}</code> {item.helps ? <span className="badge">helps here</span> : <span className="badge muted">not for this run</span>}
                <div className="figures">{item.figures}</div>
                <div className="why">{item.why}</div>
              </li>
            ))}
          </ol>
          <p className="verdict">{guide.verdict}</p>
        </>
      )}
    </details>
  );
}
