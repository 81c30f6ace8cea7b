// The GPU stress run: what runs and with which parameters, the arena and simulated GPU sizes, the
// controls to pause, step and resume it, and what the GPU found.
import { counted } from '../lib/counted';
import { useId, useState } from 'react';
import { GiB, MiB } from '../allocator/constants';
import { H200_TOTAL_MEMORY } from '../allocator/capacity';
import { formatSize } from '../allocator/format-size';
import { useSession } from '../state/session-store';
import { SNAPSHOT_SOURCE, useStress } from '../state/stress-store';
import { workloadById, WORKLOADS, type WorkloadParam } from '../trace/stream/workloads';

const ARENA_SIZES = [16 * MiB, 64 * MiB, 256 * MiB, 1 * GiB, 2 * GiB - 4];
const DEVICE_SIZES: [string, number][] = [
  ['24 GiB', 24 * GiB],
  ['40 GiB', 40 * GiB],
  ['80 GiB', 80 * GiB],
  [`H200 (${formatSize(H200_TOTAL_MEMORY)})`, H200_TOTAL_MEMORY],
];

export function StressPanel() {
  const { source, params, status, error, verifiedBlocks, mismatches, start, play, pause, step } = useStress();
  const snapshotName = useSession((s) => s.summary?.source);
  const ids = { source: useId(), arena: useId(), device: useId() };
  const restart = (request: Parameters<typeof start>[0] = {}) => void start(request).then((run) => run?.play());
  const workload = workloadById(source);
  const done = !status || status.position >= status.total;

  return (
    <section className="stress" aria-label="GPU stress">
      <h2>GPU stress</h2>
      <div className="stress-controls">
        <label htmlFor={ids.source}>Workload</label>
        <select id={ids.source} value={source} onChange={(e) => restart({ source: e.target.value })}>
          {WORKLOADS.map((w) => (
            <option key={w.id} value={w.id} title={w.description}>
              {w.name}
            </option>
          ))}
          {snapshotName && <option value={SNAPSHOT_SOURCE}>The page's source: {snapshotName}</option>}
        </select>
        {status?.playing ? (
          <button onClick={pause}>Pause</button>
        ) : (
          <button onClick={play} disabled={done}>
            Play
          </button>
        )}
        <button onClick={() => void step()} disabled={done}>
          Step
        </button>
        <button onClick={() => restart()}>Restart</button>
        <label htmlFor={ids.arena}>Arena</label>
        <select
          id={ids.arena}
          value={status?.arenaBytes || ''}
          disabled={!status?.adapter}
          onChange={(e) => restart({ arenaBytes: Number(e.target.value) })}
        >
          {status?.arenaBytes && !ARENA_SIZES.includes(status.arenaBytes) && <option value={status.arenaBytes}>{formatSize(status.arenaBytes)}</option>}
          {ARENA_SIZES.filter((b) => !status?.maxArenaBytes || b <= status.maxArenaBytes).map((b) => (
            <option key={b} value={b}>
              {formatSize(b)}
            </option>
          ))}
        </select>
        <label htmlFor={ids.device}>Simulated GPU</label>
        <select id={ids.device} value={status?.deviceBytes ?? ''} onChange={(e) => restart({ deviceBytes: Number(e.target.value) })}>
          {status && !DEVICE_SIZES.some(([, b]) => b === status.deviceBytes) && <option value={status.deviceBytes}>{formatSize(status.deviceBytes)}</option>}
          {DEVICE_SIZES.map(([label, b]) => (
            <option key={b} value={b}>
              {label}
            </option>
          ))}
        </select>
      </div>
      {workload && (
        <div className="stress-params" key={`${source}:${JSON.stringify(params)}`}>
          {workload.params.map((p) => (
            <ParamField key={p.key} param={p} value={params[p.key] ?? p.default} onCommit={(v) => restart({ params: { ...params, [p.key]: v } })} />
          ))}
        </div>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {status && (
        <dl className="stress-status">
          <dt>Requests</dt>
          <dd>
            {status.position.toLocaleString()} / {status.total.toLocaleString()} in {status.batches.toLocaleString()}{' '}
            {status.batches === 1 ? 'batch' : 'batches'}
            {status.ooms > 0 && ` · ${counted(status.ooms, 'OOM')}`}
            {status.adapter && ` · allocator and planning in ${status.planner}`}
          </dd>
          <dt>GPU</dt>
          <dd>
            {status.adapter && !status.gpuOff
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
              ` · ${status.wordlessBlocks.toLocaleString()} too small for a word of their own at this scale (not checked; enlarge the arena or shrink the simulated GPU to check them)`}
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

/** A workload parameter: typed freely, applied on Enter or leaving the field (bad values are refused there). */
function ParamField({ param, value, onCommit }: { param: WorkloadParam; value: number; onCommit(v: number): void }) {
  const [text, setText] = useState(String(value));
  const id = useId();
  const commit = () => {
    if (text.trim() !== String(value)) onCommit(Number(text.trim() === '' ? NaN : text));
  };
  return (
    <span className="param" title={param.help}>
      <label htmlFor={id}>
        {param.label}
        {param.unit === 'bytes' ? ' (bytes)' : ''}
      </label>
      <input
        id={id}
        inputMode="numeric"
        value={text}
        size={Math.max(4, String(param.max).length > 10 ? 10 : String(param.max).length)}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') commit();
        }}
      />
    </span>
  );
}
