// The sweep under the max_split slider: peak reserved memory at every slider position (OOMs in
// red, cudaMalloc churn as a thin line), the slider's position marked; a click moves the slider there.
import { counted } from '../lib/counted';
import { max, scaleLinear } from 'd3';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { keyId } from '../state/view-key';
import { useSession } from '../state/session-store';
import { adviseMaxSplit } from '../trace/sweep/sweep-advice';
import { useSweep } from './use-sweep';
import type { SweepRow } from '../trace/sweep/sweep';
import { oomOutcome } from '../trace/replay/coverage';

const W = 300;
const H = 64;

export function SweepChart({ index, onPick }: { index: number; onPick(mb: number | null): void }) {
  const { key, sweep, error } = useSweep();
  const coverage = useSession((s) => (s.summary?.key.source === key.source ? s.summary.coverage : null));
  if (!sweep || !coverage) return error ? <p className="error">{error}</p> : <p className="hint updating sweep-pending">sweeping max_split_size_mb… (updating)</p>;
  const { values, rows, done, seconds, workers, largestRequest } = sweep;
  if (values.length === 0) return null;
  const n = values.length;
  const present = rows.filter((r): r is SweepRow => r !== null);
  const x = scaleLinear().domain([0, Math.max(1, n - 1)]).range([4, W - 4]);
  const y = scaleLinear().domain([0, max(present, (r) => r['reserved_bytes.all.peak']) ?? 1]).range([H - 4, 4]);
  const c = scaleLinear().domain([0, max(present, (r) => r.num_device_alloc + r.num_device_free) ?? 1]).range([H - 4, 4]);
  const line = (value: (r: SweepRow) => number, scale: (v: number) => number): string =>
    rows.map((r, i) => (r ? `${i === 0 || !rows[i - 1] ? 'M' : 'L'}${x(i).toFixed(1)},${scale(value(r)).toFixed(1)}` : '')).join('');
  const advice = done ? adviseMaxSplit(present, largestRequest, coverage) : null;
  const bestIndex = advice ? rows.indexOf(advice.best) : -1;
  return (
    <div className="sweep" data-key={done ? keyId(key) : undefined} aria-busy={!done}>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Sweep of max_split_size_mb: peak reserved memory at ${present.length} of ${n} settings`}
      >
        <path className="sweep-churn" d={line((r) => r.num_device_alloc + r.num_device_free, c)} />
        <path className="sweep-reserved" d={line((r) => r['reserved_bytes.all.peak'], y)} />
        {rows.map((r, i) =>
          r ? (
            <circle
              key={i}
              className={r.first_oom_request !== null ? 'sweep-oom' : i === bestIndex ? 'sweep-best' : 'sweep-ok'}
              cx={x(i)}
              cy={y(r['reserved_bytes.all.peak'])}
              r={i === index ? 3.5 : 2}
              onClick={() => onPick(values[i]!)}
            >
              <title>
                {`${values[i] === null ? 'unlimited' : `${values[i]} MiB`}: reserved peak ${formatSize(r['reserved_bytes.all.peak'])}, ${r.first_oom_request === null ? 'no OOM' : `OOM at request ${grouped(r.first_oom_request)}`}, ${counted(r.num_alloc_retries, 'retry', 'retries')}, ${r.num_device_alloc} cudaMalloc / ${r.num_device_free} cudaFree`}
              </title>
            </circle>
          ) : null,
        )}
        <line className="sweep-cursor" x1={x(index)} x2={x(index)} y1={0} y2={H} />
      </svg>
      <p className="hint sweep-legend">
        <span className="key-reserved">reserved peak</span> · <span className="key-churn">cudaMalloc+cudaFree</span> ·{' '}
        <span className="key-oom">OOM</span>
        {done && seconds !== null ? ` · ${n} settings in ${seconds.toFixed(1)} s on ${counted(workers, 'worker')}` : ` · sweeping ${present.length}/${n}…`}
      </p>
      {advice && (
        <p className="advice">
          <strong>Suggestion:</strong> {advice.reason}{' '}
          {advice.ruleOfThumb && (
            <>
              The rule of thumb (1.2 × the largest request, {formatSize(largestRequest)}) gives max_split_size_mb:{advice.ruleOfThumb.mb}:{' '}
              {formatSize(advice.ruleOfThumb.row['reserved_bytes.all.peak'])} reserved, {oomOutcome(advice.ruleOfThumb.row.first_oom_request, coverage)}.
            </>
          )}{' '}
          <button className="link" onClick={() => onPick(advice.best.max_split_size_mb)}>
            Use it
          </button>
        </p>
      )}
    </div>
  );
}
