// "Predict another size…": recordings of one program at two sizes or more (files, or a folder), each
// one's size (read from its name where it says, e.g. run_b8.pickle.gz; else typed), and the size to
// predict. The predicted run then opens as a source.
import { useId, useState } from 'react';
import { useSession } from '../state/session-store';

/** A size a file's name gives: batch8, bs_8, b8, seq512, len-512, size=16, else its last number. */
export function sizeInName(name: string): number | null {
  const base = name.replace(/\.(pickle|pkl|json)(\.gz)?$/i, '');
  const named = /(?:batch|bs|b|seq|seqlen|len|length|size)[_=-]?(\d+)/i.exec(base);
  const any = [...base.matchAll(/\d+/g)].at(-1);
  const n = Number((named ?? any)?.[1] ?? (named ?? any)?.[0]);
  return n > 0 ? n : null;
}

export function PredictDialog({ files, onClose }: { files: File[]; onClose(): void }) {
  const openPrediction = useSession((s) => s.openPrediction);
  const snapshots = files.filter((f) => /\.(pickle|pkl|gz|json)$/i.test(f.name)).sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
  const [sizes, setSizes] = useState(() => snapshots.map((f) => String(sizeInName(f.name) ?? '')));
  const known = sizes.map(Number).filter((n) => n > 0);
  const [target, setTarget] = useState(() => String(known.length ? 2 * Math.max(...known) : ''));
  const targetId = useId();
  const values = sizes.map(Number);
  const problem =
    snapshots.length < 2
      ? 'Choose recordings of one program at two sizes or more (.pickle, .pickle.gz or .json).'
      : values.some((v) => !(v > 0))
        ? 'Give each recording the size it ran at (a batch size, a sequence length).'
        : new Set(values).size !== values.length
          ? 'Two recordings have the same size: each must be at a size of its own.'
          : !(Number(target) > 0)
            ? 'Give the size to predict.'
            : null;
  return (
    <section className="predict-dialog" aria-label="Predict another size">
      <h2>Predict another size</h2>
      <p className="hint">
        Recordings of one program (the same script, a few steps each) at two sizes or more: the predicted run at another size replays like a recording, under any config and
        cap.
      </p>
      <table className="predict-files">
        <thead>
          <tr>
            <th scope="col">recording</th>
            <th scope="col">size it ran at</th>
          </tr>
        </thead>
        <tbody>
          {snapshots.map((f, i) => (
            <tr key={f.name}>
              <th scope="row">{f.name}</th>
              <td>
                <input
                  type="number"
                  min={1}
                  aria-label={`Size of ${f.name}`}
                  value={sizes[i]}
                  onChange={(e) => setSizes(sizes.map((s, k) => (k === i ? e.target.value : s)))}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <label htmlFor={targetId}>size to predict</label>{' '}
      <input id={targetId} type="number" min={1} value={target} onChange={(e) => setTarget(e.target.value)} />{' '}
      <button
        disabled={problem !== null}
        onClick={() => {
          void openPrediction(
            snapshots.map((f, i) => ({ name: f.name, size: values[i]!, data: f })),
            Number(target),
          );
          onClose();
        }}
      >
        Predict
      </button>{' '}
      <button onClick={onClose}>Cancel</button>
      {problem && <p className="hint">{problem}</p>}
    </section>
  );
}
