// The GPU stress run: what runs, the controls to pause, step and resume it, and what the GPU found.
import { useId } from 'react';
import { formatSize } from '../allocator/format-size';
import { useSession } from '../state/session-store';
import { SNAPSHOT_SOURCE, useStress } from '../state/stress-store';
import { WORKLOADS } from '../trace/workloads';

export function StressPanel() {
  const { source, status, error, verifiedBlocks, mismatches, start, play, pause, step } = useStress();
  const snapshotName = useSession((s) => s.summary?.source);
  const selectId = useId();
  const restart = (next = source) => void start({ source: next }).then((run) => run?.play());

  return (
    <section className="stress" aria-label="GPU stress">
      <h2>GPU stress</h2>
      <div className="stress-controls">
        <label htmlFor={selectId}>Workload</label>
        <select id={selectId} value={source} onChange={(e) => restart(e.target.value)}>
          {WORKLOADS.map((w) => (
            <option key={w.id} value={w.id} title={w.description}>
              {w.name}
            </option>
          ))}
          {snapshotName && <option value={SNAPSHOT_SOURCE}>Snapshot: {snapshotName}</option>}
        </select>
        {status?.playing ? (
          <button onClick={pause}>Pause</button>
        ) : (
          <button onClick={play} disabled={!status || status.position >= status.total}>
            Play
          </button>
        )}
        <button onClick={() => void step()} disabled={!status || status.position >= status.total}>
          Step
        </button>
        <button onClick={() => restart()}>Restart</button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {status && (
        <dl className="stress-status">
          <dt>Requests</dt>
          <dd>
            {status.position.toLocaleString()} / {status.total.toLocaleString()} in {status.batches.toLocaleString()} {status.batches === 1 ? 'batch' : 'batches'}
            {status.ooms > 0 && ` · ${status.ooms} OOMs`}
          </dd>
          <dt>GPU</dt>
          <dd>
            {status.adapter
              ? `${status.adapter} · arena ${formatSize(status.arenaBytes)}${status.scale > 1 ? ` (1 arena byte stands for ${Math.round(status.scale).toLocaleString()} device bytes)` : ' (1:1)'}`
              : (status.gpuOff ?? 'starting…')}
          </dd>
          <dt>Verified</dt>
          <dd data-gpu="verified">
            {verifiedBlocks.toLocaleString()} blocks ·{' '}
            <span className={mismatches > 0 ? 'error' : ''}>{mismatches.toLocaleString()} mismatched words</span>
          </dd>
          <dt>Live blocks</dt>
          <dd>
            {status.liveBlocks.toLocaleString()}
            {status.wordlessBlocks > 0 &&
              ` · ${status.wordlessBlocks.toLocaleString()} too small for a word of their own at this scale (not checked; enlarge the arena to check them)`}
          </dd>
          {status.deviceLosses > 0 && (
            <>
              <dt>Device lost</dt>
              <dd>{status.deviceLosses} times; the arena was rebuilt from the allocator's state</dd>
            </>
          )}
        </dl>
      )}
    </section>
  );
}
