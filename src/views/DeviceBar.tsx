// The whole GPU at the cursor in one bar, labelled as nvidia-smi and torch.cuda report it. Under a
// memory cap (asked for, or the one the recording shows) the bar is the cap, marked at its end, since
// that is what a cudaMalloc fails against: reserved memory 6.42 GiB of a 6 GiB cap reads full, not 4%
// of the card.
import { Fragment, useId, useState, type ReactNode } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { H200_TOTAL_MEMORY } from '../allocator/capacity';
import { MiB } from '../allocator/constants';
import { formatSize } from '../allocator/format-size';
import { useSession, useViewKey } from '../state/session-store';
import { keyId } from '../state/view-key';
import { deviceMemory } from '../trace/measures/device-memory';
import { GLOSSARY } from './glossary';
import { useDelayed } from './use-delayed';

/** A CUDA context takes a few hundred MiB; other processes add theirs. */
const DEFAULT_OTHER_MIB = 500;

const PARTS = [
  ['other', 'CUDA context and other processes (estimate)'],
  ['allocated', 'allocated to tensors'],
  ['cachedSplit', 'cached free, in segments still in use'],
  ['cachedWhole', 'cached free, whole segments'],
  ['free', 'free'],
] as const;

/** The figures under the bar: [data-figure, field, label]. */
const FIGURES: [string, 'reserved' | 'allocated' | 'cachedSplit' | 'cachedWhole', ReactNode][] = [
  ['memory_reserved', 'reserved', <code>memory_reserved()</code>],
  ['memory_allocated', 'allocated', <code>memory_allocated()</code>],
  ['cached-split', 'cachedSplit', <><span className="swatch cachedSplit" /> cached, segments in use</>],
  ['cached-whole', 'cachedWhole', <><span className="swatch cachedWhole" /> cached, whole free segments</>],
];

export function DeviceBar() {
  const { view, summary } = useSession(useShallow((s) => ({ view: s.view, summary: s.summary })));
  const key = useViewKey();
  const current = view !== null && keyId(view.key) === keyId(key);
  const dim = useDelayed(!current);
  const [otherMiB, setOtherMiB] = useState(DEFAULT_OTHER_MIB);
  const otherId = useId();
  if (!view || !summary) return null;
  // The device the replays model (an H200, as the OOM messages say); the cap the replay ran under
  // (asked for, a per_process_memory_fraction, or the one a recorded OOM shows).
  const total = H200_TOTAL_MEMORY;
  const cap = summary.capacity?.kind === 'fraction' ? summary.capacity.bytes : null;
  const capWhy = summary.capacityBytes !== null ? 'the cap chosen' : summary.inferredCap ? 'the cap the recorded OOM shows' : 'per_process_memory_fraction';
  const m = deviceMemory(view.stats, view.layout, total, otherMiB * MiB, cap);
  const over = m.nvidiaSmiUsed > total;
  // Under a cap the bar is PyTorch's part of the card: reserved against the cap.
  const parts = cap !== null ? PARTS.filter(([key]) => key !== 'other') : PARTS;
  const label = cap !== null ? `reserved ${formatSize(m.reserved)} of the ${formatSize(cap)} cap` : `nvidia-smi: ${formatSize(m.nvidiaSmiUsed)} used of ${formatSize(total)}`;
  return (
    <section className={`device-bar${dim ? ' updating' : ''}`} aria-label="Device memory" data-key={keyId(view.key)} aria-busy={!current}>
      <h2>
        GPU {summary.device} at the cursor{' '}
        <span className="hint">
          {formatSize(total)} (an H200){cap !== null && <>, capped at <b title={GLOSSARY.cap}>{formatSize(cap)}</b></>}
        </span>
      </h2>
      {cap !== null && (
        <p className="hint">
          The bar is the {formatSize(cap)} PyTorch may reserve ({capWhy}): a cudaMalloc that would reserve past its end fails.
        </p>
      )}
      <div className={`bar${cap !== null ? ' capped' : ''}`} role="img" aria-label={label} data-cap={cap ?? undefined}>
        {parts.map(([key, title]) => (
          <span key={key} className={`part ${key}`} style={{ flexGrow: Math.max(0, m[key]) }} title={`${title}: ${formatSize(m[key])}`} />
        ))}
        {cap !== null && <span className="cap-mark" title={`cap: ${formatSize(cap)}`} />}
      </div>
      {cap !== null && (
        <div className="cap-scale hint">
          <span>0</span>
          <span>cap {formatSize(cap)}</span>
        </div>
      )}
      <dl className="device-figures">
        {cap !== null && (
          <>
            <dt>reserved of the cap</dt>
            <dd data-figure="cap-used" data-value={m.reserved}>
              {formatSize(m.reserved)} of {formatSize(cap)} ({((m.reserved / cap) * 100).toFixed(0)}%)
            </dd>
          </>
        )}
        <dt>nvidia-smi: used</dt>
        <dd data-figure="nvidia-smi-used" data-value={m.nvidiaSmiUsed}>
          {formatSize(m.nvidiaSmiUsed)} of {formatSize(total)}
          {over && <span className="error"> (more than the card: the next cudaMalloc fails)</span>}
        </dd>
        {FIGURES.map(([figure, key, label]) => (
          <Fragment key={figure}>
            <dt>{label}</dt>
            <dd data-figure={figure} data-value={m[key]}>
              {formatSize(m[key])}
            </dd>
          </Fragment>
        ))}
        <dt>
          <label htmlFor={otherId}>
            <span className="swatch other" /> context + other processes
          </label>
        </dt>
        <dd>
          <input
            id={otherId}
            type="number"
            min={0}
            step={50}
            value={otherMiB}
            onChange={(e) => setOtherMiB(Math.max(0, Number(e.target.value) || 0))}
            aria-label="CUDA context and other processes, MiB (an estimate)"
          />{' '}
          MiB
        </dd>
      </dl>
      <p className="hint">
        The gap between <code>memory_reserved()</code> and <code>memory_allocated()</code> is PyTorch's cache: nvidia-smi counts it as
        used, while PyTorch can reuse it only for requests that fit a cached block.
      </p>
    </section>
  );
}
