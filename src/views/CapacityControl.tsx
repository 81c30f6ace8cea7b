// The memory cap a replay runs under (torch.cuda.set_per_process_memory_fraction): none, a GPU's
// whole memory, or a custom size.
import { useId, useState } from 'react';
import { CARDS } from '../allocator/capacity';
import { ConfigError } from '../allocator/config-error';
import { parseByteSize } from '../allocator/byte-size';
import { formatSize } from '../allocator/format-size';

const PRESETS: [string, number][] = CARDS.map((c) => [`${c.name} (${c.examples})`, c.bytes]);

/** `own`: the cap the source brings when none is chosen (a per_process_memory_fraction key, or one a
 * recorded OOM shows), said beside it. */
export function CapacityControl({ bytes, own, onChange }: { bytes: number | null; own: { bytes: number; why: string } | null; onChange(bytes: number | null): void }) {
  const id = useId();
  const preset = bytes === null ? 'none' : PRESETS.some(([, b]) => b === bytes) ? String(bytes) : 'custom';
  const [custom, setCustom] = useState(preset === 'custom' && bytes !== null ? String(bytes) : '');
  const [showCustom, setShowCustom] = useState(preset === 'custom');
  const [error, setError] = useState<string | null>(null);
  const applyCustom = () => {
    try {
      onChange(parseByteSize(custom));
      setError(null);
    } catch (e) {
      setError(e instanceof ConfigError ? e.message : String(e));
    }
  };
  return (
    <div className="capacity">
      <label htmlFor={id}>Memory cap (capacity)</label>
      <select
        id={id}
        value={showCustom ? 'custom' : preset}
        onChange={(e) => {
          const v = e.target.value;
          setShowCustom(v === 'custom');
          setError(null);
          if (v === 'none') onChange(null);
          else if (v !== 'custom') onChange(Number(v));
        }}
      >
        <option value="none">{own ? `As recorded (${formatSize(own.bytes)})` : 'No cap'}</option>
        {PRESETS.map(([label, b]) => (
          <option key={b} value={b}>
            {label}
          </option>
        ))}
        <option value="custom">Custom…</option>
      </select>
      {showCustom && (
        <input
          aria-label="Custom capacity"
          placeholder="e.g. 6GiB or 12e9"
          value={custom}
          aria-invalid={error !== null}
          onChange={(e) => setCustom(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') applyCustom();
          }}
          onBlur={() => custom && applyCustom()}
        />
      )}
      {bytes !== null && <span className="hint"> {formatSize(bytes)}</span>}
      {bytes === null && own && <span className="hint"> {own.why}</span>}
      {error && <p className="error">{error}</p>}
    </div>
  );
}
