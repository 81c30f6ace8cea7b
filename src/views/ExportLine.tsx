// A config as the shell line that sets it, ready to copy: `export PYTORCH_CUDA_ALLOC_CONF=...`.
import { useState } from 'react';

/** The line that sets `conf` (quoted where the shell would read its characters). */
export function exportLine(conf: string): string {
  if (conf === '') return 'unset PYTORCH_CUDA_ALLOC_CONF';
  return `export PYTORCH_CUDA_ALLOC_CONF=${/^[A-Za-z0-9_:,.=+-]*$/.test(conf) ? conf : `'${conf.replace(/'/g, `'\\''`)}'`}`;
}

export function ExportLine({ conf }: { conf: string }) {
  const [copied, setCopied] = useState(false);
  const line = exportLine(conf);
  return (
    <div className="export-line">
      <code>{line}</code>{' '}
      <button
        className="link"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(line);
            setCopied(true);
            setTimeout(() => setCopied(false), 2000);
          } catch {
            // No clipboard permission: the line is there to select.
          }
        }}
      >
        {copied ? 'copied' : 'copy'}
      </button>
    </div>
  );
}
