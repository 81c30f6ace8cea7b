// A predicted run's size: a slider over the sizes (beside the max_split slider), and the chart of the
// predicted peak reserved and allocated memory against the size under the current config, with the cap
// as a line, the recorded sizes marked and the sizes that run out of memory (under most address layouts)
// shaded, a size where the layouts split ringed; a click moves the slider there. How the sizes were fitted is said below, never with more precision than the fit has.
import { useQuery } from '@tanstack/react-query';
import { scaleLinear } from 'd3';
import { bandPercent } from '../trace/predict/prediction-band';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { failure } from '../state/derived';
import { chartSizes, memoryNeededQuery, predictionCurveQuery, predictionFitQuery, sizeSteps } from '../state/prediction';
import { useSession, useViewKey } from '../state/session-store';
import { keyId } from '../state/view-key';
import type { CurvePoint, PredictionFacts } from '../worker/replay-protocol';
import { bandPath, curvePath } from './prediction-paths';
import { bandAnswer, cudnnWorkspacesText, edgeText } from '../trace/predict/size-fit';

const W = 300;
const H = 80;

export function SizeControl({ facts, cap }: { facts: PredictionFacts; cap: number | null }) {
  const setSize = useSession((s) => s.setSize);
  const key = useViewKey();
  const size = key.size ?? facts.size;
  const steps = sizeSteps(facts.sizes);
  let index = steps.findIndex((s) => s >= size);
  if (index < 0) index = steps.length - 1;
  const go = (i: number): void => {
    const next = Math.max(0, Math.min(steps.length - 1, i));
    if (steps[next] !== size) setSize(steps[next]!);
  };
  const sizes = chartSizes(steps, facts.sizes, size);
  const q = useQuery(predictionCurveQuery(key, sizes));
  const rows = q.data ?? null;
  const x = scaleLinear().domain([0, Math.max(...sizes)]).range([6, W - 6]);
  const top = Math.max(cap ?? 0, ...(rows ?? []).map((r) => r.peakReserved * (1 + r.band)), 1);
  const y = scaleLinear().domain([0, top * 1.05]).range([H - 4, 4]);
  const path = (value: (r: CurvePoint) => number): string => curvePath(rows, x, y, value);
  return (
    <div className="size-control">
      <div className="max-split-head">
        <span id="size-label">size (predicted)</span>
        <output>{grouped(size)}</output>
      </div>
      <div
        className="slider"
        role="slider"
        tabIndex={0}
        aria-labelledby="size-label"
        aria-valuemin={steps[0]!}
        aria-valuemax={steps.at(-1)!}
        aria-valuenow={size}
        onKeyDown={(e) => {
          const moves: Record<string, number> = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, Home: -steps.length, End: steps.length };
          if (e.key in moves) {
            e.preventDefault();
            go(index + moves[e.key]!);
          }
        }}
        onPointerDown={(e) => {
          const r = e.currentTarget.getBoundingClientRect();
          go(Math.round(((e.clientX - r.left) / r.width) * (steps.length - 1)));
        }}
      >
        <div className="slider-fill" style={{ width: `${(index / (steps.length - 1)) * 100}%` }} />
        <div className="slider-thumb" style={{ left: `${(index / (steps.length - 1)) * 100}%` }} />
      </div>
      <svg className="prediction-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label="Predicted peak reserved and allocated memory against the size" data-key={rows ? keyId({ ...key, size: undefined }) : undefined} aria-busy={!rows}>
        {rows?.map((r, i) =>
          !r.fits ? <rect key={i} className="prediction-oom" x={x(r.size) - 3} y={0} width={6} height={H} /> : null,
        )}
        {rows && rows.length > 1 && (
          <path
            className="prediction-band"
            d={bandPath(rows, x, y)}
          />
        )}
        {cap !== null && <line className="prediction-cap" x1={0} x2={W} y1={y(cap)} y2={y(cap)} />}
        <path className="sweep-churn" d={path((r) => r.peakAllocated)} />
        <path className="sweep-reserved" d={path((r) => r.peakReserved)} />
        {rows?.map((r) => (
          <circle
            key={r.size}
            className={`${!r.fits ? 'sweep-oom' : facts.sizes.includes(r.size) ? 'sweep-best' : 'sweep-ok'}${r.split ? ' prediction-split' : ''}`}
            cx={x(r.size)}
            cy={y(r.peakReserved)}
            r={r.size === size ? 3.5 : 2}
            data-size={r.size}
            data-peak={r.peakReserved}
            data-band={r.band}
            onClick={() => setSize(r.size)}
          >
            <title>{`size ${grouped(r.size)}: reserved peak ${formatSize(r.peakReserved)} (${bandPercent(r.band, r.bandBelow)}, the prediction's error), allocated peak ${formatSize(r.peakAllocated)}${r.firstOom !== null ? `, OOM at request ${grouped(r.firstOom)}` : ''}${r.split ? `; ${r.fits ? 'fits' : 'runs out'} under most address layouts, not all` : ''}${facts.sizes.includes(r.size) ? ' (recorded)' : ''}`}</title>
          </circle>
        ))}
        <line className="sweep-cursor" x1={x(size)} x2={x(size)} y1={0} y2={H} />
      </svg>
      <p className="hint sweep-legend">
        <span className="key-reserved">reserved peak</span> · <span className="key-band">the prediction's error</span> · <span className="key-churn">allocated peak</span> · <span className="key-oom">runs out of memory</span>{rows?.some((r) => r.split) && <> · <span className="key-split">the address layouts split</span></>}
        {cap !== null && ` · cap ${formatSize(cap)}`} · recorded at {facts.sizes.map(grouped).join(' and ')}
        {!rows && ' · predicting…'}
      </p>
      {failure(q.error) && <p className="error">{failure(q.error)}</p>}
      <FitLine />
      <CardsLine size={size} />
      <p className="hint prediction-facts">
        The requests of {facts.skeleton.name}; {facts.aligned.map((a) => `${(a.share * 100).toFixed(0)}% aligned with ${a.name}`).join(', ')}.{' '}
        {grouped(facts.laws.linear + facts.laws.quadratic)} allocation sizes grow with the size, {grouped(facts.laws.constant)} stay the same
        {facts.laws.unclean > 0 && `, ${grouped(facts.laws.unclean)} follow no clean law (${facts.uncleanSites.slice(0, 2).map((s) => s.site).join(', ')})`}
        {facts.laws.unaligned > 0 && `, ${grouped(facts.laws.unaligned)} are in ${facts.skeleton.name} alone`}.
        {facts.cudnnWorkspaces > 0 && ` ${cudnnWorkspacesText(facts.cudnnWorkspaces)}`}
        {facts.extrapolation !== null && ` ${facts.extrapolation.toFixed(1)}x beyond the recorded sizes: a program may change its ways at sizes it was not recorded at.`}
      </p>
    </div>
  );
}

const confName = (conf: string): string => conf || 'the defaults';

/** The largest size that fits the cap, under the config on screen and with expandable_segments:True. */
function FitLine() {
  const key = useViewKey();
  const q = useQuery(predictionFitQuery(key));
  const rows = q.data;
  if (failure(q.error)) return <p className="error">{failure(q.error)}</p>;
  if (rows === null) return <p className="hint prediction-fit">Choose a memory cap (a card) for the largest size that fits it.</p>;
  return (
    <p className="hint prediction-fit" aria-busy={!rows} data-key={rows ? keyId({ ...key, size: undefined }) : undefined}>
      {!rows
        ? 'Finding the largest size that fits the cap…'
        : `Largest size that fits the cap: ${rows
            .map((r) => `${r.largest === null ? 'none' : grouped(r.largest)}${bandAnswer(r, r.cap)} with ${confName(r.conf)}${edgeText(r, r.cap)}`)
            .join('; ')}.`}
    </p>
  );
}

/** Which of the usual cards the run at this size fits, each replayed with the card's memory as the cap. */
function CardsLine({ size }: { size: number }) {
  const key = useViewKey();
  const q = useQuery(memoryNeededQuery(key));
  const n = q.data;
  if (failure(q.error)) return <p className="error">{failure(q.error)}</p>;
  return (
    <p className="hint prediction-cards" aria-busy={!n} data-key={n ? keyId(key) : undefined}>
      {!n
        ? `Checking the cards at size ${grouped(size)}…`
        : `At size ${grouped(size)}: ${formatSize(n.peakReserved)} reserved at the peak without a cap. ` +
          n.cards.map((c) => `${c.name}: ${c.fits ? 'fits' : c.belowAllocated ? 'too small' : `OOM at request ${grouped(c.firstOom!)}`}`).join(', ') +
          '.'}
    </p>
  );
}
