// A fleet's results (splitscope batch's results.jsonl) as a table: one row per file and config, sortable
// by any column, filtered by text and by outcome, with batch-summary's lines above it. A row whose
// snapshot was chosen along with the results opens it, under the row's config, at that run's first OOM.
import { useMemo, useState } from 'react';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { AS_RECORDED, useSession } from '../state/session-store';
import type { BatchRow } from '../trace/batch/batch-rows';
import { batchSummary, batchSummaryText } from '../trace/batch/batch-summary';
import { CATEGORY_KEYS, CATEGORY_NAMES } from '../trace/categories/categories';

/** Rows read from results files; a line that is not a row is named with its file and line. */
export async function readBatchRows(files: readonly File[]): Promise<BatchRow[]> {
  const rows: BatchRow[] = [];
  for (const f of files) {
    const lines = (await f.text()).split('\n');
    lines.forEach((line, k) => {
      if (line.trim() === '') return;
      let row: BatchRow;
      try {
        row = JSON.parse(line) as BatchRow;
      } catch {
        throw new Error(`${f.name}, line ${k + 1}: not a row of splitscope batch (not JSON)`);
      }
      if (typeof row !== 'object' || row === null || typeof row.file !== 'string' || typeof row.ok !== 'boolean') {
        throw new Error(`${f.name}, line ${k + 1}: not a row of splitscope batch (no file and ok)`);
      }
      rows.push(row);
    });
  }
  return rows;
}

type Column = 'file' | 'conf' | 'outcome' | 'peak' | 'gap' | 'what';
type Show = 'all' | 'oom' | 'no-oom' | 'errors';

const base = (path: string): string => path.split(/[\\/]/).pop()!;

function cells(r: BatchRow): Record<Column, string | number> {
  if (!r.ok) return { file: base(r.file), conf: r.conf ?? 'as recorded', outcome: `error: ${r.error}`, peak: -1, gap: -1, what: '' };
  const at = r.categories_at_peak;
  const top = CATEGORY_KEYS.reduce((a, k) => (at[k] > at[a] ? k : a), CATEGORY_KEYS[0]);
  return {
    file: base(r.file),
    conf: r.conf ?? 'as recorded',
    outcome: r.outcome,
    peak: r['reserved_bytes.all.peak'],
    gap: r.reserved_minus_allocated_at_oom ?? -1,
    what: CATEGORY_NAMES[CATEGORY_KEYS.indexOf(top)]!,
  };
}

export function BatchResults({ rows, snapshots, onClose }: { rows: BatchRow[]; snapshots: File[]; onClose(): void }) {
  const openFile = useSession((s) => s.openFile);
  const [sort, setSort] = useState<{ by: Column; down: boolean }>({ by: 'file', down: false });
  const [text, setText] = useState('');
  const [show, setShow] = useState<Show>('all');
  const summary = useMemo(() => batchSummaryText(batchSummary(rows)), [rows]);
  const byName = useMemo(() => new Map(snapshots.map((f) => [f.name, f])), [snapshots]);
  const shown = useMemo(() => {
    const t = text.trim().toLowerCase();
    return rows
      .filter((r) => (show === 'errors' ? !r.ok : show === 'oom' ? r.ok && r.first_oom_request !== null : show === 'no-oom' ? r.ok && r.first_oom_request === null : true))
      .filter((r) => !t || JSON.stringify([r.file, r.conf, r.ok ? r.outcome : r.error]).toLowerCase().includes(t))
      .map((r) => ({ r, c: cells(r) }))
      .sort((a, b) => {
        const x = a.c[sort.by];
        const y = b.c[sort.by];
        const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
        return sort.down ? -d : d;
      });
  }, [rows, text, show, sort]);
  const header: [Column, string][] = [
    ['file', 'file'],
    ['conf', 'config'],
    ['outcome', 'OOM'],
    ['peak', 'peak reserved'],
    ['gap', 'reserved − allocated at the OOM'],
    ['what', 'most of the memory at the peak'],
  ];
  return (
    <section className="batch-results" aria-label="Fleet results">
      <h2>
        Fleet results <button className="link" onClick={onClose}>close</button>
      </h2>
      <pre className="batch-summary">{summary}</pre>
      <div className="batch-filters">
        <input aria-label="Filter the rows" placeholder="filter: a file, a config, an error" value={text} onChange={(e) => setText(e.target.value)} />
        <select aria-label="Which rows" value={show} onChange={(e) => setShow(e.target.value as Show)}>
          <option value="all">all rows</option>
          <option value="oom">OOM under the config</option>
          <option value="no-oom">no OOM under the config</option>
          <option value="errors">files that could not be read</option>
        </select>
        <output>
          {grouped(shown.length)} of {grouped(rows.length)} rows
        </output>
      </div>
      {/* Fixed columns: a long path, config or error is cut short (whole in its title), never widening the
          table past its panel. */}
      <table>
        <colgroup>
          {header.map(([c]) => (
            <col key={c} className={`col-${c}`} />
          ))}
          <col className="col-open" />
        </colgroup>
        <thead>
          <tr>
            {header.map(([c, label]) => (
              <th key={c} aria-sort={sort.by === c ? (sort.down ? 'descending' : 'ascending') : 'none'}>
                <button className="link" onClick={() => setSort({ by: c, down: sort.by === c ? !sort.down : c === 'peak' || c === 'gap' })}>
                  {label}
                  {sort.by === c ? (sort.down ? ' ▾' : ' ▴') : ''}
                </button>
              </th>
            ))}
            <th />
          </tr>
        </thead>
        <tbody>
          {shown.slice(0, 500).map(({ r, c }) => {
            const file = byName.get(base(r.file));
            return (
              <tr key={`${r.file}\u0000${r.conf}`} className={r.ok ? undefined : 'error'} data-file={c.file} data-conf={r.conf ?? ''}>
                <td className="cut" title={r.file}>
                  {c.file}
                </td>
                <td className="cut" title={c.conf as string}>
                  <code>{c.conf}</code>
                </td>
                {/* An error can be any length: cut short; an outcome is a sentence that wraps. */}
                <td className={r.ok ? undefined : 'cut'} title={r.ok ? undefined : (c.outcome as string)}>
                  {c.outcome}
                </td>
                <td className="num">{r.ok ? formatSize(c.peak as number) : ''}</td>
                <td className="num">{r.ok && (c.gap as number) >= 0 ? formatSize(c.gap as number) : ''}</td>
                <td>{c.what}</td>
                <td>
                  {r.ok &&
                    (file ? (
                      <button
                        className="link"
                        // Under the row's config from the first replay, at that run's first OOM: opened as
                        // recorded and then changed, the cursor stayed at the end while it opened.
                        onClick={() => void openFile(file, { settings: { ...AS_RECORDED, conf: r.conf }, cursor: 'runFirstOom' })}
                      >
                        open
                      </button>
                    ) : (
                      <span className="hint" title="Choose the snapshot with the results to open it from here">not chosen</span>
                    ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {shown.length > 500 && <p className="hint">The first 500 of {grouped(shown.length)} rows; filter or sort to see others.</p>}
    </section>
  );
}
