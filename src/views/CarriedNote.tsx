// A file opened as recorded while the last source ran under other settings: said in one line, with a
// way to carry those settings over (in the config panel, so that the map and timeline do not move).
import { useShallow } from 'zustand/react/shallow';
import { formatSize } from '../allocator/format-size';
import { useSession } from '../state/session-store';

export function CarriedNote() {
  const { carried, applySettings, dismissCarried } = useSession(useShallow((s) => ({ carried: s.carried, applySettings: s.applySettings, dismissCarried: s.dismissCarried })));
  if (!carried) return null;
  const { conf, capacityBytes } = carried.settings;
  const what = [conf !== null ? `PYTORCH_CUDA_ALLOC_CONF=${conf || '(defaults)'}` : null, capacityBytes !== null ? `a ${formatSize(capacityBytes)} cap` : null].filter(Boolean).join(' and ');
  return (
    <p className="note carried" role="status">
      Opened as recorded (its own config and cap); {carried.from} ran under <code>{what}</code>.{' '}
      <button className="link" onClick={() => applySettings(carried.settings)}>
        Apply that here too
      </button>{' '}
      <button className="link" onClick={dismissCarried} aria-label="Dismiss the note">
        dismiss
      </button>
    </p>
  );
}
