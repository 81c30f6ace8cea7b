// The tuning guide: the settings worth trying on this run, each with its replayed figures and why,
// for the view key on screen (while another key's is being replayed it says so); its words reach no
// further than the recording (a dump that ends at its OOM: "better in the recorded part").
import { formatSize } from '../allocator/format-size';
import { oomOutcome } from '../trace/replay/coverage';
import { usePanel } from './use-panel';
import { keyId } from '../state/view-key';
import { ExportLine } from './ExportLine';
import { NO_GUIDE } from '../state/guide';
import { useGuide } from './use-guide';

export function TuningGuide() {
  const panel = usePanel('guide');
  const { key, guide, pending, error } = useGuide(panel.open);
  return (
    <details className="guide" data-key={guide ? keyId(key) : undefined} aria-busy={panel.open && pending} {...panel}>
      <summary>Tuning guide for this run</summary>
      {error && <p className="error">{error}</p>}
      {guide === null && <p className="hint">{NO_GUIDE}</p>}
      {pending && !error && <p className="hint updating">Replaying the settings worth trying on the current config… (updating)</p>}
      {guide && (
        <>
          <p className="hint guide-current" data-peak={guide.current['reserved_bytes.all.peak']} data-first-oom={guide.current.first_oom_request ?? ''}>
            Each setting below was replayed on this source, on top of the current config <code>{guide.current.conf || '(defaults)'}</code> (peak
            reserved {formatSize(guide.current['reserved_bytes.all.peak'])}, {oomOutcome(guide.current.first_oom_request, guide.coverage)}).
          </p>
          <ol className="guide-items">
            {guide.items.map((item) => (
              <li
                key={item.kind}
                className={item.helps ? 'helps' : 'not-here'}
                data-conf={item.conf}
                data-peak={item.row['reserved_bytes.all.peak']}
                data-ooms={item.row.num_ooms}
                data-first-oom={item.row.first_oom_request ?? ''}
              >
                <code>{item.conf || '(defaults)'}</code> <span className={`badge${item.helps ? '' : ' muted'}`}>{item.badge}</span>
                <div className="figures">{item.figures}</div>
                <div className="why">{item.why}</div>
              </li>
            ))}
          </ol>
          <p className="verdict">{guide.verdict}</p>
          {guide.items[0]?.helps && <ExportLine conf={guide.items[0].conf} />}
        </>
      )}
    </details>
  );
}
