// Numbers at the cursor and at the end: memory_stats() names, fragmentation, the cudaMalloc churn,
// and the OOM message where a request failed.
import { formatSize } from '../allocator/format-size';
import { usePanel } from './use-panel';
import { useShallow } from 'zustand/react/shallow';
import { useSession } from '../state/session-store';

const BYTE_ROWS: [string, string][] = [
  ['allocated_bytes.all.current', 'allocated'],
  ['reserved_bytes.all.current', 'reserved'],
  ['active_bytes.all.current', 'active'],
  ['inactive_split_bytes.all.current', 'inactive split'],
  ['allocated_bytes.all.peak', 'allocated, peak'],
  ['reserved_bytes.all.peak', 'reserved, peak'],
];
const COUNT_ROWS: [string, string][] = [
  ['num_device_alloc', 'cudaMalloc calls'],
  ['num_device_free', 'cudaFree calls'],
  ['num_alloc_retries', 'retries (cache flushed)'],
  ['num_ooms', 'OOMs'],
];

export function StatsPanel() {
  const { summary, view, seek } = useSession(
    // Only what this panel shows: the store changes often (busy, cursor) and other panels need not redraw.
    useShallow((s) => ({ summary: s.summary, view: s.view, seek: s.seek })),
  );
  const panel = usePanel('ooms');
  if (!summary || !view) return <section className="stats-panel" aria-label="Stats" />;
  const at = view.stats;
  const end = summary.stats;
  const f = view.fragmentation;
  const atEnd = view.cursor === summary.requests - 1;
  return (
    <section className="stats-panel" aria-label="Stats">
      <h2>At the cursor{atEnd ? ' (the end)' : ''}</h2>
      <table className="stats">
        <thead>
          <tr>
            <th />
            <th scope="col">cursor</th>
            <th scope="col">end</th>
          </tr>
        </thead>
        <tbody>
          {BYTE_ROWS.map(([key, label]) => (
            <tr key={key} title={key}>
              <th scope="row">{label}</th>
              <td data-stat={key} data-value={at[key]}>
                {formatSize(at[key] ?? 0)}
              </td>
              <td>{formatSize(end[key] ?? 0)}</td>
            </tr>
          ))}
          <tr title="reserved minus allocated: cached by PyTorch, used as far as nvidia-smi can tell">
            <th scope="row">reserved − allocated</th>
            <td>{formatSize(f.reservedMinusAllocated)}</td>
            <td />
          </tr>
          <tr title="the largest request that needs no new cudaMalloc">
            <th scope="row">largest free block</th>
            <td>{formatSize(f.largestFreeBlock)}</td>
            <td />
          </tr>
          <tr title="1 − largest free block / cached free bytes">
            <th scope="row">external fragmentation</th>
            <td>{(f.externalRatio * 100).toFixed(1)}%</td>
            <td />
          </tr>
          {COUNT_ROWS.map(([key, label]) => (
            <tr key={key} title={key}>
              <th scope="row">{label}</th>
              <td data-stat={key} data-value={at[key]}>
                {(at[key] ?? 0).toLocaleString()}
              </td>
              <td>{(end[key] ?? 0).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {view.oom && <p className="oom">{view.oom}</p>}
      {summary.ooms.length > 0 && (
        <details className="ooms" {...panel}>
          <summary>
            {summary.ooms.length} OOM{summary.ooms.length > 1 ? 's' : ''} in this replay
          </summary>
          <ul>
            {summary.ooms.slice(0, 20).map((o) => (
              <li key={o.request}>
                <button className="link" onClick={() => seek(o.request)}>
                  request {(o.request + 1).toLocaleString()}
                </button>
                : <span className="oom">{o.message}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
