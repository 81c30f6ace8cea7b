// The max_split slider: a log scale from 20 MiB to the capacity (or the peak reserved memory), with
// "unlimited" as its top. aria-valuenow is max_split_size_mb as PyTorch reads it (MiB).
import { useRef } from 'react';
import { maxSplitSteps, stepIndex } from '../state/max-split-steps';
import { SweepChart } from './SweepChart';

export interface MaxSplitSliderProps {
  /** Current max_split_size_mb; null when unlimited. */
  valueMiB: number | null;
  topMiB: number;
  onChange(mib: number | null): void;
}

export function MaxSplitSlider({ valueMiB, topMiB, onChange }: MaxSplitSliderProps) {
  const steps = maxSplitSteps(Math.max(32, topMiB));
  const index = stepIndex(steps, valueMiB);
  const last = steps.length - 1;
  const finiteTop = steps[last - 1]!;
  const track = useRef<HTMLDivElement>(null);
  const go = (i: number) => {
    const next = Math.max(0, Math.min(last, i));
    if (next !== index) onChange(steps[next]!);
  };
  const fromPointer = (clientX: number) => {
    const r = track.current!.getBoundingClientRect();
    go(Math.round(((clientX - r.left) / r.width) * last));
  };
  const text = valueMiB === null ? 'unlimited' : `${valueMiB} MiB`;
  return (
    <div className="max-split">
      <div className="max-split-head">
        <span id="max-split-label">max_split_size_mb</span>
        <output>{text}</output>
      </div>
      <div
        ref={track}
        className="slider"
        role="slider"
        tabIndex={0}
        aria-labelledby="max-split-label"
        aria-valuemin={steps[0]!}
        aria-valuemax={finiteTop}
        aria-valuenow={valueMiB ?? finiteTop}
        aria-valuetext={text}
        onKeyDown={(e) => {
          const big = Math.max(1, Math.round(last / 10));
          const moves: Record<string, number> = {
            ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -big, PageUp: big, Home: -last, End: last,
          };
          if (e.key in moves) {
            e.preventDefault();
            go(index + moves[e.key]!);
          }
        }}
        onPointerDown={(e) => {
          e.currentTarget.setPointerCapture(e.pointerId);
          fromPointer(e.clientX);
        }}
        onPointerMove={(e) => {
          if (e.currentTarget.hasPointerCapture(e.pointerId)) fromPointer(e.clientX);
        }}
      >
        <div className="slider-fill" style={{ width: `${(index / last) * 100}%` }} />
        <div className="slider-thumb" style={{ left: `${(index / last) * 100}%` }} />
      </div>
      <SweepChart index={index} onPick={(mib) => onChange(mib)} />
      <div className="max-split-scale">
        <span>20 MiB</span>
        <span>
          {finiteTop >= 1024 ? `${(finiteTop / 1024).toFixed(finiteTop % 1024 ? 1 : 0)} GiB` : `${finiteTop} MiB`}, then unlimited
        </span>
      </div>
    </div>
  );
}
