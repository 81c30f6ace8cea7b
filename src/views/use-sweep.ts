// The max_split sweep of the view key, as the slider's chart, the config panel and the exports show
// it: the whole sweep once done, else the rows so far (one query, one cache entry).
import { useQuery } from '@tanstack/react-query';
import { failure } from '../state/derived';
import { useSession, useViewKey } from '../state/session-store';
import { sweepProgressKey, sweepQuery, type SweepResult } from '../state/sweep';
import type { ViewKey } from '../worker/replay-settings';

export function useSweep(): { key: ViewKey; sweep: SweepResult | null; error: string | null } {
  const key = useViewKey();
  // The source's recorded config names the sweep of a key that asks for none (null: its replay is not in yet).
  const recordedConf = useSession((s) => (s.summary?.key.source === key.source ? s.summary.recordedConf : null));
  const whole = useQuery({ ...sweepQuery(key, recordedConf ?? ''), enabled: recordedConf !== null });
  const progress = useQuery<SweepResult>({ queryKey: sweepProgressKey(key, recordedConf ?? ''), queryFn: () => new Promise(() => {}), enabled: false });
  return { key, sweep: whole.data ?? (whole.isFetching ? (progress.data ?? null) : null), error: failure(whole.error) };
}
