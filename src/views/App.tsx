import { useEffect, useId, useState } from 'react';
import { formatSize } from '../allocator/format-size';
import { useSession } from '../state/session-store';
import { startDefaultStress } from '../state/stress-store';
import { StressPanel } from './StressPanel';

const KEY_STATS = [
  'allocated_bytes.all.current',
  'allocated_bytes.all.peak',
  'reserved_bytes.all.current',
  'reserved_bytes.all.peak',
  'inactive_split_bytes.all.current',
  'num_device_alloc',
  'num_device_free',
  'num_alloc_retries',
  'num_ooms',
];

let stressStarted = false;
/** Once per page (StrictMode runs effects twice in development). */
function startStressOnce(): void {
  if (stressStarted) return;
  stressStarted = true;
  void startDefaultStress();
}

export function App() {
  const { summary, error, busy, progress, confError, setConf, openFile, openSample } = useSession();
  const [conf, setConfText] = useState('');
  const confId = useId();
  useEffect(() => {
    void openSample();
  }, [openSample]);
  useEffect(startStressOnce, []);

  return (
    <main>
      <header>
        <h1>splitscope</h1>
        <p>How PyTorch's CUDA caching allocator would have handled a recorded run, under the config you type.</p>
      </header>
      <section className="controls">
        <label>
          Open snapshot…{' '}
          <input
            type="file"
            accept=".pickle,.gz,.json,.pkl"
            onChange={(e) => {
              const file = e.target.files?.[0];
              if (file) void openFile(file);
              e.target.value = '';
            }}
          />
        </label>
        <div>
          <label htmlFor={confId}>PYTORCH_CUDA_ALLOC_CONF</label>
          <input
            id={confId}
            className="conf"
            value={conf}
            placeholder="(recorded config) e.g. max_split_size_mb:128"
            aria-invalid={confError !== null}
            onChange={(e) => setConfText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') setConf(conf);
            }}
          />
          <button onClick={() => setConf(conf)}>Replay</button>
          {confError && <p className="error">{confError}</p>}
        </div>
      </section>
      <StressPanel />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {progress !== null && <progress value={progress} max={1} />}
      {summary && (
        <section aria-busy={busy}>
          <h2>{summary.source}</h2>
          <p>
            config <code>{summary.conf || '(defaults)'}</code> · recorded <code>{summary.recordedConf || '(defaults)'}</code> ·
            addresses {summary.addresses} · {summary.requests.toLocaleString()} requests ·{' '}
            {summary.events.toLocaleString()} trace events
          </p>
          <table className="stats">
            <tbody>
              {KEY_STATS.map((k) => (
                <tr key={k}>
                  <th scope="row">{k}</th>
                  <td data-stat={k}>{summary.stats[k]?.toLocaleString()}</td>
                  <td>{k.includes('bytes') ? formatSize(summary.stats[k] ?? 0) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {summary.ooms.map((o) => (
            <p key={o.request} className="oom">
              request {o.request}: {o.message}
            </p>
          ))}
          {summary.notes.map((n) => (
            <p key={n} className="note">
              {n}
            </p>
          ))}
        </section>
      )}
    </main>
  );
}
