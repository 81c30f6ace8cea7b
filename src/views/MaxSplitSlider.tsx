// The max_split slider: a log scale from the config's floor (20 MiB, or large_segment_size_mb) to the
// cap (or the source's own peak reserved memory), with "unlimited" as its top. Its positions follow the
// source, the cap and the floor, never the config's other effects, so a step lands where the scale says.
// aria-valuenow is max_split_size_mb as PyTorch reads it (MiB).
import { useRef } from 'react';
import { stepIndex } from '../state/max-split-steps';
import { SweepChart } from './SweepChart';

export interface MaxSplitSliderProps {
  /** Current max_split_size_mb; null when unlimited. */
  valueMiB: number | null;
  /** Its positions (MiB, null last: unlimited). */
  steps: readonly (number | null)[];
  onChange(mib: number | null): void;
}

const mib = (v: number): string => (v >= 1024 ? `${(v / 1024).toFixed(v % 1024 ? 1 : 0)} GiB` : `${v} MiB`);

export function MaxSplitSlider({ valueMiB, steps, onChange }: MaxSplitSliderProps) {
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
        <span>{mib(steps[0]!)}</span>
        <span>{mib(finiteTop)}, then unlimited</span>
      </div>
    </div>
  );
}
