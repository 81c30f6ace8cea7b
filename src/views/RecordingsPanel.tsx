// Recordings beside the open one: another snapshot compared with it (peaks, OOMs, the reserved-allocated
// gap, both timelines on one relative axis, the allocation sites whose bytes at the peak differ most),
// or the snapshots of one job's ranks, one row each with the what-if under the session's config.
import { compareRuns } from '../trace/sweep/rank-runs';
import { useIsFetching, useQuery } from '@tanstack/react-query';
import { useShallow } from 'zustand/react/shallow';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { failure } from '../state/derived';
import { digestQuery, selfDigestQuery, useRecordings } from '../state/recordings-store';
import { useSession } from '../state/session-store';
import { wholeRun, type Coverage } from '../trace/replay/coverage';
import type { RecordingDigest, RunFigures } from '../trace/replay/recording-digest';
import { shortFrame } from './frame-text';
import { FileButton } from './FileButton';
import { RECORDING_COLORS, RecordingsChart } from './RecordingsChart';
import { usePanel } from './use-panel';

const FIGURES: [string, (f: RunFigures) => number, boolean][] = [
  ['peak reserved', (f) => f.peakReserved, true],
  ['peak allocated', (f) => f.peakAllocated, true],
  ['OOMs', (f) => f.ooms, false],
  ['reserved − allocated at the peak', (f) => f.gapAtPeak, true],
  ['cudaMalloc calls', (f) => f.deviceAllocs, false],
];

const show = (v: number, bytes: boolean): string => (bytes ? formatSize(v) : v.toLocaleString('en-US'));
const signed = (v: number, bytes: boolean): string => (v === 0 ? '=' : `${v > 0 ? '+' : '−'}${show(Math.abs(v), bytes)}`);

/** The allocation sites whose bytes at the allocated peak differ most between two recordings. */
function siteDifferences(a: RecordingDigest, b: RecordingDigest, count = 12): { label: string; a: number; b: number }[] {
  const bytes = new Map<string, { a: number; b: number }>();
  for (const s of a.sitesAtPeak) bytes.set(s.label, { a: s.bytes, b: 0 });
  for (const s of b.sitesAtPeak) bytes.set(s.label, { a: bytes.get(s.label)?.a ?? 0, b: s.bytes });
  return [...bytes]
    .map(([label, v]) => ({ label, ...v }))
    .filter((r) => r.a !== r.b)
    .sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a) || x.label.localeCompare(y.label))
    .slice(0, count);
}

function CompareRecordings({ self, other }: { self: RecordingDigest; other: RecordingDigest }) {
  const runs = [self, other];
  const whatIf = self.whatIf && other.whatIf;
  return (
    <div className="recordings-compare">
      <table className="recordings-table" aria-label="Two recordings compared">
        <thead>
          <tr>
            <th scope="col">figure</th>
            {runs.map((d, k) => (
              <th key={k} scope="col" title={d.name}>
                <span className="rc-swatch" style={{ background: RECORDING_COLORS[k] }} /> {d.name}
              </th>
            ))}
            <th scope="col">second − first</th>
          </tr>
        </thead>
        <tbody>
          {FIGURES.map(([label, value, bytes]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              {runs.map((d, k) => (
                <td key={k} data-figure={label}>
                  {show(value(d.recorded), bytes)}
                </td>
              ))}
              <td>{signed(value(other.recorded) - value(self.recorded), bytes)}</td>
            </tr>
          ))}
          {whatIf && (
            <tr>
              <th scope="row">
                peak reserved under <code>{self.whatIf!.conf || 'the defaults'}</code>
              </th>
              {runs.map((d, k) => (
                <td key={k}>
                  {formatSize(d.whatIf!.peakReserved)}
                  {d.whatIf!.ooms > 0 && `, OOM at request ${grouped(d.whatIf!.firstOom)}`}
                </td>
              ))}
              <td>{signed(other.whatIf!.peakReserved - self.whatIf!.peakReserved, true)}</td>
            </tr>
          )}
        </tbody>
      </table>
      <RecordingsChart digests={runs} />
      <p className="hint">
        Allocated solid, reserved dashed; each run drawn from its first request to its last ({self.requests.toLocaleString()} and {other.requests.toLocaleString()} requests).
      </p>
      <h3>Where the bytes at the peak differ, by allocation site</h3>
      <table className="recordings-table sites-diff" aria-label="Allocation sites at the peak, compared">
        <thead>
          <tr>
            <th scope="col">site</th>
            <th scope="col">first</th>
            <th scope="col">second</th>
            <th scope="col">second − first</th>
          </tr>
        </thead>
        <tbody>
          {siteDifferences(self, other).map((r) => (
            <tr key={r.label}>
              <td className="site" title={r.label}>
                {shortFrame(r.label)}
              </td>
              <td>{formatSize(r.a)}</td>
              <td>{formatSize(r.b)}</td>
              <td>{signed(r.b - r.a, true)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A what-if against the recording, ranked as the tuning guide ranks runs (rank-runs.ts: no OOM first,
 * then the later first OOM, a tie at the same first OOM, then less peak reserved, less cudaMalloc/cudaFree churn), in words
 * that reach no further than the recording: on one that ends at its OOM or began mid-run, "better in
 * the recorded part", never "helps".
 */
function verdict(recorded: RunFigures, whatIf: RunFigures, coverage: Coverage): string {
  const ranked = (f: RunFigures) => ({
    num_ooms: f.ooms,
    first_oom_request: f.firstOom < 0 ? null : f.firstOom,
    'reserved_bytes.all.peak': f.peakReserved,
    num_device_alloc: f.deviceAllocs,
    num_device_free: f.deviceFrees,
  });
  const diff = compareRuns(ranked(whatIf), ranked(recorded));
  if (diff === 0) return 'same';
  if (wholeRun(coverage)) return diff < 0 ? 'helps' : 'hurts';
  return diff < 0 ? 'better in the recorded part' : 'worse in the recorded part';
}

/** One rank: its digest under the config asked for, its what-if and verdict. */
function RankRowView({ file, conf }: { file: File; conf: string | null }) {
  const openFile = useSession((s) => s.openFile);
  const q = useQuery(digestQuery(file, conf));
  const d = q.data;
  const error = failure(q.error);
  const w = d?.whatIf;
  const v = d && w ? verdict(d.recorded, w, d.coverage) : null;
  return (
    <tr onClick={() => file.size > 0 && void openFile(file)} title={`Open ${file.name}`} className={d?.recorded.ooms ? 'has-oom' : undefined} data-conf={conf ?? ''} aria-busy={!d && !error}>
      <th scope="row">{file.name}</th>
      {error ? (
        <td colSpan={6} className="error">
          {error}
        </td>
      ) : !d ? (
        <td colSpan={6} className="hint">
          replaying…
        </td>
      ) : (
        <>
          <td>{d.requests.toLocaleString()}</td>
          <td data-figure="peak reserved">{formatSize(d.recorded.peakReserved)}</td>
          <td data-figure="peak allocated">{formatSize(d.recorded.peakAllocated)}</td>
          <td data-figure="OOMs">{d.recorded.ooms}</td>
          <td>{(d.recorded.fragmentationAtPeak * 100).toFixed(1)}%</td>
          <td className="what-if">
            {w ? (
              <>
                {formatSize(w.peakReserved)} <span className="delta">{signed(w.peakReserved - d.recorded.peakReserved, true)}</span>
                {w.ooms > 0 && <span className="has-oom">, OOM at request {grouped(w.firstOom)}</span>} <b className={`verdict-${v!.split(' ')[0]}`}>{v}</b>
              </>
            ) : conf !== null ? (
              'as recorded'
            ) : (
              'set a config to see'
            )}
          </td>
        </>
      )}
    </tr>
  );
}

function RankTable({ files, conf }: { files: File[]; conf: string | null }) {
  return (
    <table className="recordings-table ranks" aria-label="Ranks of one job">
      <thead>
        <tr>
          <th scope="col">rank</th>
          <th scope="col">requests</th>
          <th scope="col">peak reserved</th>
          <th scope="col">peak allocated</th>
          <th scope="col">OOMs</th>
          <th scope="col" title="At the reserved peak: the share of the free bytes outside the largest free block">fragmentation</th>
          <th scope="col" title={conf !== null ? `Peak reserved replayed under ${conf || 'the defaults'}` : undefined}>
            what-if
          </th>
        </tr>
      </thead>
      <tbody>
        {files.map((f) => (
          <RankRowView key={f.name} file={f} conf={conf} />
        ))}
      </tbody>
    </table>
  );
}

/** The open source beside another file, both digested under the config asked for. */
function OtherRecording({ file, source, sourceId, conf }: { file: File; source: string; sourceId: number; conf: string | null }) {
  const selfQ = useQuery(selfDigestQuery(sourceId, conf));
  const otherQ = useQuery(digestQuery(file, conf));
  const error = failure(otherQ.error) ?? (failure(selfQ.error) && `${source}: ${failure(selfQ.error)}`);
  return (
    <>
      {error && <p className="error">{error}</p>}
      {selfQ.data && otherQ.data ? <CompareRecordings self={selfQ.data} other={otherQ.data} /> : !error && <p className="hint">Replaying both…</p>}
    </>
  );
}

export function RecordingsPanel() {
  const panel = usePanel('recordings');
  const { other, wanted, ranks, ranksError, compareWith, openRanks, closeCompare, closeRanks } = useRecordings(
    useShallow((s) => ({ other: s.other, wanted: s.wanted, ranks: s.ranks, ranksError: s.ranksError, compareWith: s.compareWith, openRanks: s.openRanks, closeCompare: s.closeCompare, closeRanks: s.closeRanks })),
  );
  const { conf, sourceKind, source, sourceId } = useSession(
    useShallow((s) => ({ conf: s.settings.conf, sourceKind: s.summary?.sourceKind, source: s.summary?.source, sourceId: s.summary?.key.source ?? 0 })),
  );
  const busy = useIsFetching({ predicate: (q) => String(q.queryKey[0]).startsWith('digest') }) > 0;
  return (
    <details className="recordings" {...panel}>
      <summary>Other recordings: compare two, or a job's ranks</summary>
      {panel.open && (
        <div className="recordings-body">
          <div className="recordings-actions">
            {sourceKind === 'snapshot' && <FileButton label={`Compare ${source} with another snapshot…`} onFiles={([f]) => void compareWith(f!)} />}
            <FileButton label="A job's ranks (several files)…" multiple onFiles={(files) => void openRanks(files)} />
            <FileButton label="… or a folder of them" directory onFiles={(files) => void openRanks(files)} />
            {busy && <span className="hint">replaying…</span>}
          </div>
          {wanted && !other && (
            <p className="note">
              This link compares {source} with {wanted.name}, which is too large to travel in a link: choose that file with “Compare {source} with another snapshot…” to see the comparison.
            </p>
          )}
          {other && (
            <section aria-label="Two recordings">
              <header className="recordings-head">
                <h3>
                  {source} and {other.file.name}
                </h3>
                <button className="link" onClick={closeCompare}>
                  close
                </button>
              </header>
              <OtherRecording file={other.file} source={source ?? ''} sourceId={sourceId} conf={conf} />
            </section>
          )}
          {ranks && (
            <section aria-label="Ranks">
              <header className="recordings-head">
                <h3>{ranks.length} ranks</h3>
                <span className="hint">
                  click a row to open that rank{conf !== null && <> · what-if: each replayed under <code>{conf || 'the defaults'}</code></>}
                </span>
                <button className="link" onClick={closeRanks}>
                  close
                </button>
              </header>
              <div className="recordings-scroll">
                {ranksError ? <p className="error">{ranksError}</p> : <RankTable files={ranks} conf={conf} />}
              </div>
            </section>
          )}
        </div>
      )}
    </details>
  );
}
