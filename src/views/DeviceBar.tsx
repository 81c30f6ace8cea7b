// The whole GPU at the cursor in one bar, labelled as nvidia-smi and torch.cuda report it, and at an
// OOM why the request failed.
import { Fragment, useId, useState, type ReactNode } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { H200_TOTAL_MEMORY } from '../allocator/capacity';
import { MiB } from '../allocator/constants';
import { formatSize } from '../allocator/format-size';
import { useSession } from '../state/session-store';
import { deviceMemory } from '../trace/measures/device-memory';

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
  const { view, capacity, device } = useSession(
    useShallow((s) => ({ view: s.view, capacity: s.settings.capacityBytes, device: s.summary?.device ?? 0 })),
  );
  const [otherMiB, setOtherMiB] = useState(DEFAULT_OTHER_MIB);
  const otherId = useId();
  if (!view) return null;
  // The device the replays model (an H200, as the OOM messages say); a cap is a memory fraction of it,
  // and the bar then shows the part PyTorch may use.
  const total = H200_TOTAL_MEMORY;
  const m = deviceMemory(view.stats, view.layout, total, otherMiB * MiB, capacity);
  const over = m.nvidiaSmiUsed > total;
  return (
    <section className="device-bar" aria-label="Device memory">
      <h2>
        GPU {device} at the cursor{' '}
        <span className="hint">
          {formatSize(total)} (an H200){capacity !== null && `, ${formatSize(capacity)} allowed`}
        </span>
      </h2>
      {capacity !== null && <p className="hint">The bar shows the context and the {formatSize(capacity)} that set_per_process_memory_fraction allows PyTorch.</p>}
      <div className="bar" role="img" aria-label={`nvidia-smi: ${formatSize(m.nvidiaSmiUsed)} used of ${formatSize(total)}`}>
        {PARTS.map(([key, label]) => (
          <span key={key} className={`part ${key}`} style={{ flexGrow: Math.max(0, m[key]) }} title={`${label}: ${formatSize(m[key])}`} />
        ))}
      </div>
      <dl className="device-figures">
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
      {view.oom && (
        <div className="oom-why" role="note" aria-label="Why this request failed">
          <strong>Why request {(view.cursor + 1).toLocaleString()} failed</strong>
          <ul>
            {view.oomWhy.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
