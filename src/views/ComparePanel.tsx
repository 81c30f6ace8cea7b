// Configs side by side over one source: a table of the figures that differ, and for each config its
// timeline and segment map, all on the session's cursor.
import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { MAX_COMPARED, MIN_COMPARED, useCompare } from '../state/compare-store';
import { allocationFrames, useSession } from '../state/session-store';
import { COMPARE_FIGURES, comparisonSentence, confLabel, formatFigure } from './compare-figures';
import { SegmentMap } from './SegmentMap';
import { Timeline } from './Timeline';

function ConfField({ index, conf }: { index: number; conf: string }) {
  const { setConf, removeConf, count } = useCompare(
    useShallow((s) => ({ setConf: s.setConf, removeConf: s.removeConf, count: s.confs?.length ?? 0 })),
  );
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
          if (e.key === 'Enter') setConf(index, text);
        }}
        onBlur={() => setConf(index, text)}
      />
      {count > MIN_COMPARED && (
        <button className="link" aria-label={`Remove config ${index + 1}`} onClick={() => removeConf(index)}>
          remove
        </button>
      )}
    </div>
  );
}

export function ComparePanel() {
  const { confs, runs, views, error, addConf, close } = useCompare(
    useShallow((s) => ({ confs: s.confs, runs: s.runs, views: s.views, error: s.error, addConf: s.addConf, close: s.close })),
  );
  const { cursor, playing, seek, setPlaying } = useSession(
    useShallow((s) => ({ cursor: s.cursor, playing: s.playing, seek: s.seek, setPlaying: s.setPlaying })),
  );
  if (!confs) return null;
  const shown = runs ?? [];
  return (
    <section className="compare" aria-label="Comparison">
      <header className="compare-head">
        <h2>Compare configs</h2>
        <span className="hint">same source, same cap, one cursor</span>
        <span className="spacer" />
        <button onClick={close}>Close comparison</button>
      </header>
      <div className="compare-confs">
        {confs.map((c, i) => (
          <ConfField key={i} index={i} conf={c} />
        ))}
        {confs.length < MAX_COMPARED && <button onClick={addConf}>Add a config</button>}
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {shown.length > 0 && (
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
          <p className="compare-sentence">{comparisonSentence(shown)}</p>
        </>
      )}
      {!runs && <p className="hint">Replaying {confs.length} configs…</p>}
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
