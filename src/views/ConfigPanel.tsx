// The settings a replay runs under: the max_split slider, the whole PYTORCH_CUDA_ALLOC_CONF string
// (checked as it is typed, applied on Enter) and the memory cap; where they differ from the
// recording's own, an "as recorded" button takes them back.
import { useEffect, useId, useState } from 'react';
import { MiB } from '../allocator/constants';
import { configMyths, maxSplitIsNoCap } from '../allocator/config-myths';
import { configRefusal, parseAllocConf } from '../allocator/config-parser';
import { sameDecisions } from '../allocator/config';
import { useShallow } from 'zustand/react/shallow';
import { AS_RECORDED, useSession } from '../state/session-store';
import { sliderSteps } from '../state/sweep';
import { formatSize } from '../allocator/format-size';
import type { ReplaySummary } from '../worker/replay-protocol';
import { adviseMaxSplit } from '../trace/sweep/sweep-advice';
import type { SweepRow } from '../trace/sweep/sweep';
import { CapacityControl } from './CapacityControl';
import { CarriedNote } from './CarriedNote';
import { SizeControl } from './SizeControl';
import { GLOSSARY } from './glossary';
import { MaxSplitSlider } from './MaxSplitSlider';
import { useSweep } from './use-sweep';

function safeMaxSplit(conf: string): number {
  try {
    return parseAllocConf(conf).config.maxSplitSize;
  } catch {
    return Infinity;
  }
}

/** The cap a source brings: a per_process_memory_fraction key's, or the one its recorded OOM shows. */
function ownCap(summary: ReplaySummary | null): { bytes: number; why: string } | null {
  if (!summary?.capacity || summary.capacityBytes !== null) return null;
  const cap = summary.inferredCap;
  const why = cap
    ? `inferred from the recorded OOM: between ${formatSize(cap.lo)} and ${formatSize(cap.hi)}`
    : 'per_process_memory_fraction in the config';
  return { bytes: summary.capacity.bytes, why };
}

/** Whether the settings asked for make other decisions than the recording's own (config or cap). */
function differsFromRecording(summary: ReplaySummary, conf: string | null, capacityBytes: number | null): boolean {
  if (capacityBytes !== null) return true;
  if (conf === null) return false;
  try {
    return !sameDecisions(parseAllocConf(conf).config, parseAllocConf(summary.recordedConf).config);
  } catch {
    return true;
  }
}

export function ConfigPanel() {
  const { summary, settings, confError, setConf, setMaxSplit, setCapacity, applySettings } = useSession(
    // Only what this panel shows: the store changes often (busy, cursor) and other panels need not redraw.
    useShallow((s) => ({
      summary: s.summary?.key.source === s.sourceId ? s.summary : null,
      settings: s.settings,
      confError: s.confError,
      setConf: s.setConf,
      setMaxSplit: s.setMaxSplit,
      setCapacity: s.setCapacity,
      applySettings: s.applySettings,
    })),
  );
  const confId = useId();
  // The field shows the config asked for (the recording's own when none is).
  const applied = settings.conf ?? summary?.recordedConf ?? '';
  const [text, setText] = useState(applied);
  const [typing, setTyping] = useState(false);
  // The field shows the config in force unless the user is editing it.
  useEffect(() => {
    if (!typing) setText(applied);
  }, [applied, typing]);
  const live = typing ? configRefusal(text) : null;
  const maxSplit = safeMaxSplit(applied);
  const { sweep } = useSweep();
  const largestRequest = sweep?.largestRequest ?? 0;
  const suggested = sweep?.done && summary ? adviseMaxSplit(sweep.rows.filter((r): r is SweepRow => r !== null), largestRequest, summary.coverage)?.best.max_split_size_mb : null;
  const myths = [...configMyths(text), maxSplitIsNoCap(maxSplit, largestRequest, suggested != null ? suggested * MiB : null)].filter((m): m is string => m !== null);
  const steps = summary ? sliderSteps(summary, settings.conf) : null;
  const recorded = summary?.sourceKind === 'snapshot';
  return (
    <section className="config" aria-label="Config">
      <h2>Config</h2>
      <CarriedNote />
      {summary?.prediction && <SizeControl facts={summary.prediction} cap={summary.capacity?.kind === 'fraction' ? summary.capacity.bytes : null} />}
      {steps && (
        <MaxSplitSlider
          valueMiB={Number.isFinite(maxSplit) ? maxSplit / MiB : null}
          steps={steps}
          onChange={(mib) => {
            setTyping(false);
            setMaxSplit(mib);
          }}
        />
      )}
      <label htmlFor={confId}>PYTORCH_CUDA_ALLOC_CONF</label>
      <div className="conf-row">
        <input
          id={confId}
          className="conf"
          value={text}
          spellCheck={false}
          placeholder="(defaults) e.g. max_split_size_mb:128"
          aria-invalid={(live ?? confError) !== null}
          aria-describedby={`${confId}-error`}
          onChange={(e) => {
            setTyping(true);
            setText(e.target.value);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              setConf(text);
              setTyping(false);
            }
            if (e.key === 'Escape') setTyping(false);
          }}
        />
        <button
          onClick={() => {
            setConf(text);
            setTyping(false);
          }}
          disabled={live !== null}
        >
          Replay
        </button>
      </div>
      <p id={`${confId}-error`} className="error conf-error">
        {live ?? confError ?? ''}
      </p>
      {myths.map((m) => (
        <p key={m} className="myth" role="note">
          {m}
        </p>
      ))}
      {recorded && summary && (
        <p className="hint recorded-with">
          recorded with <code>{summary.recordedConf || '(defaults)'}</code> ·{' '}
          <span className="term" tabIndex={0} title={GLOSSARY[summary.addresses === 'recorded' ? 'addresses as recorded' : 'addresses simulated']}>
            {summary.addresses === 'recorded' ? 'segments at their recorded addresses' : 'segment addresses simulated (driver model)'}
          </span>
        </p>
      )}
      {recorded && summary && differsFromRecording(summary, settings.conf, settings.capacityBytes) && (
        <button className="as-recorded" onClick={() => applySettings(AS_RECORDED)} title="Replay with the recording's own config and cap">
          ↺ As recorded
        </button>
      )}
      <CapacityControl bytes={settings.capacityBytes} own={ownCap(summary)} onChange={setCapacity} />
    </section>
  );
}
