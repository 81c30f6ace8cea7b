// Which max_split setting a sweep recommends, and why, beside the rule of thumb
// "about 1.2 times the largest tensor". Its words reach no further than the recording (coverage.ts).
import { formatSize } from '../../allocator/format-size';
import { oomOutcome, type Coverage } from '../replay/coverage';
import { churn, compareRuns, tiedAtFirstOom } from './rank-runs';
import type { SweepRow } from './sweep';

export interface SweepAdvice {
  best: SweepRow;
  reason: string;
  /** The rule of thumb's setting (MiB, rounded to a swept value) and its row. */
  ruleOfThumb: { mb: number; row: SweepRow } | null;
}

const label = (r: SweepRow): string => (r.max_split_size_mb === null ? 'unlimited' : `max_split_size_mb:${r.max_split_size_mb}`);

/** The best row by compareRuns (rank-runs.ts); on a tie the default (unlimited), which needs no setting at all. */
export function adviseMaxSplit(rows: readonly SweepRow[], largestRequest: number, coverage: Coverage): SweepAdvice | null {
  if (rows.length === 0) return null;
  const best = [...rows].sort(
    (a, b) => compareRuns(a, b) || Number(a.max_split_size_mb !== null) - Number(b.max_split_size_mb !== null),
  )[0]!;
  const unlimited = rows.find((r) => r.max_split_size_mb === null);
  const outcome = oomOutcome(best.first_oom_request, coverage);
  const name = best.max_split_size_mb === null ? 'The default, unlimited,' : label(best);
  const figures = `${formatSize(best['reserved_bytes.all.peak'])} reserved at the peak, ${churn(best)} cudaMalloc/cudaFree calls`;
  const tie = tiedAtFirstOom(rows);
  let reason =
    best.first_oom_request === null
      ? `${name} does best: ${outcome}, ${figures}`
      : tie
        ? `No max_split_size_mb setting avoids the OOM or moves it: each one swept runs out at the same request (${outcome}), where PyTorch raises. A tie: keep the default, unlimited, which needs no setting`
        : `No max_split_size_mb setting avoids the OOM: each one swept runs out of memory. ${name} gets furthest (${outcome}), ${figures}`;
  if (unlimited && unlimited !== best && !tie) {
    reason += `; unlimited reaches ${formatSize(unlimited['reserved_bytes.all.peak'])}${unlimited.first_oom_request !== null ? ` with an ${oomOutcome(unlimited.first_oom_request, coverage)}` : ''}`;
  }
  reason += '.';
  const finite = rows.filter((r) => r.max_split_size_mb !== null);
  const target = (1.2 * largestRequest) / 2 ** 20;
  const near = finite.length
    ? finite.reduce((a, b) => (Math.abs(Math.log(b.max_split_size_mb! / target)) < Math.abs(Math.log(a.max_split_size_mb! / target)) ? b : a))
    : null;
  return { best, reason, ruleOfThumb: near ? { mb: near.max_split_size_mb!, row: near } : null };
}
