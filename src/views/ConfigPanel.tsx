// The settings a replay runs under: the max_split slider, the whole PYTORCH_CUDA_ALLOC_CONF string
// (checked as it is typed, applied on Enter) and the memory cap.
import { useEffect, useId, useState } from 'react';
import { MiB } from '../allocator/constants';
import { ConfigError } from '../allocator/config-error';
import { configMyths, maxSplitIsNoCap } from '../allocator/config-myths';
import { parseAllocConf } from '../allocator/config-parser';
import { useShallow } from 'zustand/react/shallow';
import { useSession } from '../state/session-store';
import { formatSize } from '../allocator/format-size';
import type { ReplaySummary } from '../worker/replay-protocol';
import { useSweep } from '../state/sweep-store';
import { CapacityControl } from './CapacityControl';
import { MaxSplitSlider } from './MaxSplitSlider';

function check(text: string): string | null {
  try {
    parseAllocConf(text);
    return null;
  } catch (e) {
    return e instanceof ConfigError ? e.message : String(e);
  }
}

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

export function ConfigPanel() {
  const { summary, settings, confError, setConf, setMaxSplit, setCapacity } = useSession(
    // Only what this panel shows: the store changes often (busy, cursor) and other panels need not redraw.
    useShallow((s) => ({ summary: s.summary, settings: s.settings, confError: s.confError, setConf: s.setConf, setMaxSplit: s.setMaxSplit, setCapacity: s.setCapacity })),
  );
  const confId = useId();
  const applied = summary?.conf ?? '';
  const [text, setText] = useState(applied);
  const [typing, setTyping] = useState(false);
  // The field shows the config in force unless the user is editing it.
  useEffect(() => {
    if (!typing) setText(applied);
  }, [applied, typing]);
  const live = typing ? check(text) : null;
  // The slider shows the config last asked for (the replay may still be catching up).
  const asked = settings.conf ?? summary?.conf ?? '';
  const maxSplit = safeMaxSplit(asked);
  const top = settings.capacityBytes ?? summary?.peakReserved ?? 0;
  const largestRequest = useSweep((s) => s.largestRequest);
  const myths = [...configMyths(text), maxSplitIsNoCap(maxSplit, largestRequest)].filter((m): m is string => m !== null);

  return (
    <section className="config" aria-label="Config">
      <h2>Config</h2>
      <MaxSplitSlider
        valueMiB={Number.isFinite(maxSplit) ? maxSplit / MiB : null}
        topMiB={Math.max(64, top / MiB)}
        onChange={(mib) => {
          setTyping(false);
          setMaxSplit(mib);
        }}
      />
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
      {summary?.sourceKind === 'snapshot' && (
        <p className="hint">
          recorded with <code>{summary.recordedConf || '(defaults)'}</code> · addresses {summary.addresses}
        </p>
      )}
      <CapacityControl bytes={settings.capacityBytes} own={ownCap(summary)} onChange={setCapacity} />
    </section>
  );
}
