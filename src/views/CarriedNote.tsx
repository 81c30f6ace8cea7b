// A file opened as recorded while the last source was viewed under other settings (the user's what-if, not
// what that file was recorded under): said in one line, with a
// way to carry those settings over (in the config panel, so that the map and timeline do not move).
import { useShallow } from 'zustand/react/shallow';
import { sameDecisions } from '../allocator/config';
import { parseAllocConf } from '../allocator/config-parser';
import { formatSize } from '../allocator/format-size';
import { useSession } from '../state/session-store';

/** Whether two config strings make the same decisions (false where PyTorch would refuse either). */
function sameConf(a: string, b: string): boolean {
  try {
    return sameDecisions(parseAllocConf(a).config, parseAllocConf(b).config);
  } catch {
    return false;
  }
}

export function CarriedNote() {
  const { carried, applySettings, dismissCarried, recordedConf } = useSession(
    useShallow((s) => ({
      carried: s.carried,
      applySettings: s.applySettings,
      dismissCarried: s.dismissCarried,
      // The new source's own config, once its first replay is back.
      recordedConf: s.summary && s.summary.key.source === s.sourceId ? s.summary.recordedConf : null,
    })),
  );
  if (!carried) return null;
  // The last source's config alone, and the new file was recorded under it: applying it changes nothing.
  if (carried.settings.capacityBytes === null && carried.settings.conf !== null && recordedConf !== null && sameConf(carried.settings.conf, recordedConf)) return null;
  const { conf, capacityBytes } = carried.settings;
  const what = [conf !== null ? `PYTORCH_CUDA_ALLOC_CONF=${conf || '(defaults)'}` : null, capacityBytes !== null ? `a ${formatSize(capacityBytes)} cap` : null].filter(Boolean).join(' and ');
  return (
    <p className="note carried" role="status">
      Opened as recorded (its own config and cap); you viewed {carried.from} under <code>{what}</code>.{' '}
      <button className="link" onClick={() => applySettings(carried.settings)}>
        Apply that here too
      </button>{' '}
      <button className="link" onClick={dismissCarried} aria-label="Dismiss the note">
        dismiss
      </button>
    </p>
  );
}
