// Recordings beside the open one: another snapshot compared with it (peaks, OOMs, the reserved-allocated
// gap, both timelines on one relative axis, the allocation sites whose bytes at the peak differ most),
// or the snapshots of one job's ranks, one row each with the what-if under the session's config.
import { useShallow } from 'zustand/react/shallow';
import { formatSize } from '../allocator/format-size';
import { useRecordings, type RankRow } from '../state/recordings-store';
import { useSession } from '../state/session-store';
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
                  {d.whatIf!.ooms > 0 && `, OOM at request ${(d.whatIf!.firstOom + 1).toLocaleString()}`}
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

/** A what-if against the recording: fewer OOMs first, then less peak reserved (as the tuning guide ranks). */
function verdict(recorded: RunFigures, whatIf: RunFigures): 'helps' | 'hurts' | 'same' {
  if (whatIf.ooms !== recorded.ooms) return whatIf.ooms < recorded.ooms ? 'helps' : 'hurts';
  if (whatIf.peakReserved === recorded.peakReserved) return 'same';
  return whatIf.peakReserved < recorded.peakReserved ? 'helps' : 'hurts';
}

function RankTable({ rows, conf }: { rows: RankRow[]; conf: string | null }) {
  const openFile = useSession((s) => s.openFile);
  const asked = rows.find((r) => r.digest?.whatIf)?.digest?.whatIf?.conf;
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
          <th scope="col" title={conf !== null ? `Peak reserved replayed under ${asked ?? conf}` : undefined}>
            what-if
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const d = r.digest;
          const w = d?.whatIf;
          return (
            <tr key={r.name} onClick={() => r.file.size > 0 && void openFile(r.file)} title={`Open ${r.name}`} className={d?.recorded.ooms ? 'has-oom' : undefined}>
              <th scope="row">{r.name}</th>
              {r.error ? (
                <td colSpan={6} className="error">
                  {r.error}
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
                        {w.ooms > 0 && <span className="has-oom">, {w.ooms} OOM{w.ooms === 1 ? '' : 's'}</span>} <b className={`verdict-${verdict(d.recorded, w)}`}>{verdict(d.recorded, w)}</b>
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
        })}
      </tbody>
    </table>
  );
}

export function RecordingsPanel() {
  const panel = usePanel('recordings');
  const { other, wanted, self, ranks, busy, compareWith, openRanks, closeCompare, closeRanks } = useRecordings(
    useShallow((s) => ({ other: s.other, wanted: s.wanted, self: s.self, ranks: s.ranks, busy: s.busy, compareWith: s.compareWith, openRanks: s.openRanks, closeCompare: s.closeCompare, closeRanks: s.closeRanks })),
  );
  const { conf, sourceKind, source } = useSession(useShallow((s) => ({ conf: s.settings.conf, sourceKind: s.summary?.sourceKind, source: s.summary?.source })));
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
              {other.error && <p className="error">{other.error}</p>}
              {self && other.digest ? <CompareRecordings self={self} other={other.digest} /> : !other.error && <p className="hint">Replaying both…</p>}
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
                <RankTable rows={ranks} conf={conf} />
              </div>
            </section>
          )}
        </div>
      )}
    </details>
  );
}
