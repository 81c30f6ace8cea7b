// The tuning guide of the view key, as the guide panel and the OOM box both show it (one query, one cache entry).
import { useQuery } from '@tanstack/react-query';
import { guideQuery } from '../state/guide';
import { useSession, useViewKey } from '../state/session-store';
import { failure } from '../state/derived';
import type { TuningGuide } from '../trace/sweep/tuning-guide';
import type { ViewKey } from '../worker/replay-settings';

export function useGuide(enabled: boolean): { key: ViewKey; guide: TuningGuide | null | undefined; pending: boolean; error: string | null } {
  const key = useViewKey();
  const recordedConf = useSession((s) => (s.summary?.key.source === key.source ? s.summary.recordedConf : null));
  const q = useQuery({ ...guideQuery(key, recordedConf ?? ''), enabled: enabled && recordedConf !== null });
  return { key, guide: q.data, pending: q.data === undefined && !q.error, error: failure(q.error) };
}
