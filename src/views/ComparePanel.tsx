// Configs side by side over one source: a table of the figures that differ, and for each config its
// timeline and segment map, all on the session's cursor. The replays are the view key's (cap, device,
// inserted calls) under each config; while the current key's are on their way it says so.
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useShallow } from 'zustand/react/shallow';
import { addCompareConf, closeCompare, compareAtQuery, compareRunsQuery, MAX_COMPARED, MIN_COMPARED, removeCompareConf, setCompareConf, useCompare } from '../state/compare-store';
import { failure } from '../state/derived';
import { allocationFrames, useSession, useViewKey } from '../state/session-store';
import { keyId } from '../state/view-key';
import { COMPARE_FIGURES, comparisonSentence, confLabel, formatFigure } from './compare-figures';
import { SegmentMap } from './SegmentMap';
import { Timeline } from './Timeline';

function ConfField({ index, conf, count }: { index: number; conf: string; count: number }) {
  const [text, setText] = useState(conf);
  useEffect(() => setText(conf), [conf]);
  return (
    <div className="compare-conf">
      <input
        className="conf"
        value={text}
        spellCheck={false}
        placeholder="(defaults)"
        aria-label={`Config ${index + 1} to compare (PYTORCH_CUDA_ALLOC_CONF)`}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') setCompareConf(index, text);
        }}
        onBlur={() => setCompareConf(index, text)}
      />
      {count > MIN_COMPARED && (
        <button className="link" aria-label={`Remove config ${index + 1}`} onClick={() => removeCompareConf(index)}>
          remove
        </button>
      )}
    </div>
  );
}

export function ComparePanel() {
  const { confs, cursor, playing, seek, setPlaying, coverage } = useSession(
    useShallow((s) => ({ confs: s.compare, cursor: s.cursor, playing: s.playing, seek: s.seek, setPlaying: s.setPlaying, coverage: s.summary?.coverage ?? null })),
  );
  const inputError = useCompare((s) => s.error);
  const key = useViewKey();
  const runsQ = useQuery({ ...compareRunsQuery(key, confs ?? [], cursor), enabled: confs !== null });
  const atQ = useQuery({ ...compareAtQuery(key, confs ?? [], cursor), enabled: confs !== null && runsQ.data !== undefined });
  if (!confs) return null;
  const runs = runsQ.data ?? null;
  // States at the cursor belong to these configs (a placeholder of other configs is not shown).
  const views = atQ.data?.every((v, i) => keyId(v.key) === keyId({ ...key, conf: confs[i]! })) ? atQ.data : undefined;
  const error = inputError ?? failure(runsQ.error) ?? failure(atQ.error);
  const shown = runs ?? [];
  return (
    <section className="compare" aria-label="Comparison" data-key={runs ? keyId(key) : undefined} aria-busy={!runs}>
      <header className="compare-head">
        <h2>Compare configs</h2>
        <span className="hint">same source, same cap, one cursor</span>
        <span className="spacer" />
        <button onClick={closeCompare}>Close comparison</button>
      </header>
      <div className="compare-confs">
        {confs.map((c, i) => (
          <ConfField key={i} index={i} conf={c} count={confs.length} />
        ))}
        {confs.length < MAX_COMPARED && <button onClick={addCompareConf}>Add a config</button>}
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {shown.length > 0 && coverage && (
        <>
          <table className="compare-table" aria-label="Figures compared">
            <thead>
              <tr>
                <th scope="col">config</th>
                {COMPARE_FIGURES.map((f) => (
                  <th key={f.key} scope="col" title={f.key}>
                    {f.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((run, i) => (
                <tr key={i} data-conf={run.conf}>
                  <th scope="row">
                    <code>{confLabel(run.conf)}</code>
                  </th>
                  {COMPARE_FIGURES.map((f) => {
                    const value = f.value(run, views?.[i]);
                    const base = f.value(shown[0]!, views?.[0]);
                    const delta = i > 0 && value !== base && !Number.isNaN(value) ? value - base : 0;
                    return (
                      <td key={f.key} data-stat={f.key} data-value={value}>
                        {formatFigure(f, value)}
                        {delta !== 0 && (
                          <span className={`delta ${delta < 0 ? 'less' : 'more'}`}>
                            {' '}
                            ({delta > 0 ? '+' : '−'}
                            {formatFigure(f, Math.abs(delta))})
                          </span>
                        )}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
          <p className="compare-sentence">{comparisonSentence(shown, coverage)}</p>
        </>
      )}
      {!runs && !error && <p className="hint updating">Replaying {confs.length} configs… (updating)</p>}
      <div className="compare-panes">
        {shown.map((run, i) => (
          <section key={i} className="compare-pane" aria-label={`Config ${confLabel(run.conf)}`}>
            <h3>
              <code>{confLabel(run.conf)}</code>
            </h3>
            <Timeline series={run.timeline} cursor={cursor} onCursor={seek} playing={playing} onPlayingChange={setPlaying} />
            <SegmentMap layout={views?.[i]?.layout ?? null} cursor={views?.[i]?.cursor ?? cursor} frames={allocationFrames} />
          </section>
        ))}
      </div>
    </section>
  );
}
