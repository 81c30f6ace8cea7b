// The sweep explorer: another setting swept on top of the current config (roundup_power2_divisions,
// garbage_collection_threshold), or a built-in workload under many seeds with the chance of an OOM.
// A row applies its setting (or opens that seed).
import { useEffect, useId, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useShallow } from 'zustand/react/shallow';
import { configToString } from '../allocator/config';
import { formatSize } from '../allocator/format-size';
import { failure } from '../state/derived';
import { explore, exploreQuery, useExplore, type ExploreAxis } from '../state/explore-store';
import { useSession, useViewKey } from '../state/session-store';
import { replayBasis } from '../state/sweep-pool';
import { keyId } from '../state/view-key';
import { oomProbability } from '../trace/sweep/seed-sweep';
import { withParam, type SweepRow } from '../trace/sweep/sweep';
import { usePanel } from './use-panel';

const AXES: [ExploreAxis, string][] = [
  ['roundup_power2_divisions', 'roundup_power2_divisions (every size bucket)'],
  ['garbage_collection_threshold', 'garbage_collection_threshold (needs a memory cap)'],
  ['seed', 'seeds of the built-in workload: the chance of an OOM'],
];

export function SweepExplorer() {
  const asked = useExplore((s) => s.asked);
  const { summary, settings, sourceLink, setConf, openWorkload } = useSession(
    useShallow((s) => ({ summary: s.summary, settings: s.settings, sourceLink: s.sourceLink, setConf: s.setConf, openWorkload: s.openWorkload })),
  );
  const panel = usePanel('explorer');
  const key = useViewKey();
  const axis = asked?.axis ?? null;
  const values = asked?.values ?? [];
  // The rows of the current key (a new config, cap or source sweeps again while the panel is open).
  const q = useQuery({ ...exploreQuery(key, axis ?? 'seed', values), enabled: asked !== null && panel.open });
  const rows: (SweepRow | null)[] = q.data ?? values.map(() => null);
  const done = q.data !== undefined;
  const error = failure(q.error);
  const axisId = useId();
  const seedsId = useId();
  const [chosen, setChosen] = useState<ExploreAxis>('roundup_power2_divisions');
  const [seeds, setSeeds] = useState(20);
  // The choice follows a sweep started elsewhere (a script through window.splitscope).
  useEffect(() => {
    if (axis) setChosen(axis);
  }, [axis]);
  const present = rows.filter((r): r is SweepRow => r !== null);
  const apply = (i: number): void => {
    if (!axis || !summary) return;
    if (axis === 'seed') {
      if (sourceLink?.kind === 'workload') openWorkload(sourceLink.id, { ...sourceLink.params, seed: values[i]! });
      return;
    }
    if (keyId(summary.key) === keyId(key)) setConf(configToString(withParam(replayBasis(summary).asked, axis, values[i]!)));
  };
  const label = (v: number): string => (axis === 'seed' ? `seed ${v}` : v === 0 ? 'off' : String(v));
  return (
    <details className="explorer" {...panel}>
      <summary>Sweep explorer</summary>
      <div className="explorer-controls">
        <label htmlFor={axisId}>sweep</label>
        <select id={axisId} value={chosen} onChange={(e) => setChosen(e.target.value as ExploreAxis)}>
          {AXES.map(([a, text]) => (
            <option key={a} value={a}>
              {text}
            </option>
          ))}
        </select>
        {chosen === 'seed' && (
          <>
            <input id={seedsId} type="number" min={2} max={500} value={seeds} onChange={(e) => setSeeds(Math.max(2, Math.min(500, Math.round(Number(e.target.value)) || 2)))} />
            <label htmlFor={seedsId}>seeds</label>
          </>
        )}
        <button onClick={() => explore(chosen, chosen === 'seed' ? { seeds } : {})}>Run</button>
      </div>
      {error && <p className="error">{error}</p>}
      {axis === 'seed' && done && present.length > 0 && (
        <p className="explorer-probability" data-probability={oomProbability(present)}>
          P(OOM) = {(oomProbability(present) * 100).toFixed(0)}%: {present.filter((r) => r.num_ooms > 0).length} of {present.length} seeds hit at least one
          OOM under <code>{present[0]!.conf || '(defaults)'}</code>.
        </p>
      )}
      {axis && rows.length > 0 && (
        <table className="explorer-table" aria-label={`Sweep of ${axis}`} data-key={done ? keyId(key) : undefined} aria-busy={!done}>
          <thead>
            <tr>
              <th scope="col">{axis === 'seed' ? 'seed' : axis}</th>
              <th scope="col">peak reserved</th>
              <th scope="col">OOMs</th>
              <th scope="col">retries</th>
              <th scope="col">cudaMalloc</th>
              <th scope="col">cudaFree</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i} data-value={values[i]}>
                <th scope="row">
                  <button className="link" onClick={() => apply(i)} title={axis === 'seed' ? 'Open this seed' : 'Apply this setting'}>
                    {label(values[i]!)}
                  </button>
                </th>
                {r ? (
                  <>
                    <td data-stat="reserved_bytes.all.peak" data-value={r['reserved_bytes.all.peak']}>
                      {formatSize(r['reserved_bytes.all.peak'])}
                    </td>
                    <td data-stat="num_ooms" className={r.num_ooms > 0 ? 'error' : ''}>
                      {r.num_ooms}
                    </td>
                    <td>{r.num_alloc_retries}</td>
                    <td>{r.num_device_alloc}</td>
                    <td>{r.num_device_free}</td>
                  </>
                ) : (
                  <td colSpan={5}>…</td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {axis === 'garbage_collection_threshold' && settings.capacityBytes === null && (
        <p className="hint">Without a memory cap gc never runs, so every row is the same: pick a capacity first.</p>
      )}
    </details>
  );
}
