// What the memory is for the replay on screen: its source's categories, under the OOMs that replay
// refused (the timeline it is drawn over is that replay's).
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { memoryKindsQuery } from '../state/memory-kinds';
import { useSession } from '../state/session-store';
import { sourceKeyOf } from '../state/view-key';

export function useMemoryKinds(enabled = true) {
  const summary = useSession((s) => s.summary);
  const key = useMemo(() => (summary ? sourceKeyOf(summary.key) : { source: -1 }), [summary]);
  const failed = useMemo(() => summary?.ooms.map((o) => o.request) ?? [], [summary]);
  return useQuery({ ...memoryKindsQuery(key, failed), enabled: enabled && summary !== null }).data ?? null;
}
