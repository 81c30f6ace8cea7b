// What to bring, for a first-time visitor: PyTorch's calls that record a snapshot of one's own program
// (and dump one at an out-of-memory error), each copied with one click. Folded into one line of the
// header; opened, it lies over the page, so that the views below keep their size.
import { useRef, useState } from 'react';

const RECORD = `import torch
torch.cuda.memory._record_memory_history(max_entries=100_000)
# ... run your training steps ...
torch.cuda.memory._dump_snapshot("snapshot.pickle")`;
const ON_OOM = `def oom_observer(device, alloc, device_alloc, device_free):
    torch.cuda.memory._dump_snapshot("oom_snapshot.pickle")
torch._C._cuda_attach_out_of_memory_observer(oom_observer)`;

/** A block of code and its Copy button. */
function Snippet({ code, what }: { code: string; what: string }) {
  const ref = useRef<HTMLElement>(null);
  const [note, setNote] = useState<string | null>(null);
  return (
    <div className="snippet">
      <pre>
        <code ref={ref}>{code}</code>
      </pre>
      <button
        aria-label={`Copy ${what}`}
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(code);
            setNote('Copied');
          } catch {
            // No clipboard (an insecure origin, no permission): the code is selected for Ctrl+C instead.
            if (ref.current) getSelection()?.selectAllChildren(ref.current);
            setNote('Selected: press Ctrl+C');
          }
          setTimeout(() => setNote(null), 2500);
        }}
      >
        Copy
      </button>
      <span role="status" className="hint">
        {note}
      </span>
    </div>
  );
}

export function RecordYours() {
  return (
    <details className="record-yours">
      <summary>Record yours</summary>
      <div className="record-yours-body">
        <p>Record a snapshot of your own program with PyTorch (2.1 or later):</p>
        <Snippet code={RECORD} what="the code that records a snapshot" />
        <p>Or, after the first call, have PyTorch dump one when it runs out of memory:</p>
        <Snippet code={ON_OOM} what="the code that dumps a snapshot at an OOM" />
        <p>
          Then drop the file on this page, or open it with <b>Open snapshot…</b>; it never leaves this machine.
        </p>
      </div>
    </details>
  );
}
