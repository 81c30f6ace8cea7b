// What an exported picture says of itself, so that it stands alone in a bug report: the file, the config
// it was replayed under (and the one it was recorded under, where they differ), the cap, and the moment.
import { formatSize } from '../allocator/format-size';
import type { ReplaySummary } from '../worker/replay-protocol';

type Captioned = Pick<ReplaySummary, 'source' | 'conf' | 'recordedConf' | 'capacity' | 'requests' | 'sourceKind'>;

/** The caption's lines: a title, then the settings and the cursor. */
export function exportCaption(summary: Captioned, cursor: number, what: string): string[] {
  const conf = (c: string): string => (c === '' ? 'the defaults' : c);
  const config =
    summary.sourceKind === 'snapshot' && summary.conf !== summary.recordedConf
      ? `replayed under PYTORCH_CUDA_ALLOC_CONF ${conf(summary.conf)} (recorded under ${conf(summary.recordedConf)})`
      : `PYTORCH_CUDA_ALLOC_CONF ${conf(summary.conf)}`;
  const cap = summary.capacity?.kind === 'fraction' ? `capped at ${formatSize(summary.capacity.bytes)}` : 'no cap (the device’s memory)';
  // Numbered as the timeline numbers them, from 0.
  const at = cursor >= 0 ? `at request ${cursor.toLocaleString('en-US')} of 0 to ${(summary.requests - 1).toLocaleString('en-US')}` : 'before the first request';
  return [`${what}: ${summary.source}`, `${config} · ${cap} · ${at} · splitscope`];
}
