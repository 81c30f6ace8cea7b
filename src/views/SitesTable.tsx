// The allocation sites holding memory at the cursor (the innermost frame shown of each stack): bytes,
// allocations and the largest, sortable by any column; a row selects its site.
import { useState } from 'react';
import { formatSize } from '../allocator/format-size';
import type { AllocationSite } from '../trace/measures/memory-by-stack';
import { shortFrame } from './frame-text';
import { CATEGORY_NAMES } from '../trace/categories/categories';

type Column = 'label' | 'bytes' | 'count' | 'largest';

const COLUMNS: [Column, string][] = [
  ['label', 'site (file:line)'],
  ['bytes', 'bytes'],
  ['count', 'allocations'],
  ['largest', 'largest'],
];

/** Rows shown before "show all". */
const FIRST_ROWS = 25;

export interface SitesTableProps {
  sites: AllocationSite[];
  total: number;
  selected: string | null;
  onSelect(site: string | null): void;
  /** Each site's category (trace/categories), where known. */
  categoryOf?: ReadonlyMap<string, number> | null;
}

export function SitesTable({ sites, total, selected, onSelect, categoryOf = null }: SitesTableProps) {
  const [sort, setSort] = useState<{ by: Column; down: boolean }>({ by: 'bytes', down: true });
  const [all, setAll] = useState(false);
  const sorted = [...sites].sort((a, b) => {
    const d = sort.by === 'label' ? a.label.localeCompare(b.label) : a[sort.by] - b[sort.by];
    return (sort.down ? -d : d) || b.bytes - a.bytes;
  });
  const shown = all ? sorted : sorted.slice(0, FIRST_ROWS);
  return (
    <div className="sites">
      <table aria-label="Allocation sites at the cursor">
        <thead>
          <tr>
            {COLUMNS.map(([c, text]) => (
              <th key={c} aria-sort={sort.by === c ? (sort.down ? 'descending' : 'ascending') : 'none'} className={c === 'label' ? 'site' : 'num'}>
                <button className="link" onClick={() => setSort({ by: c, down: sort.by === c ? !sort.down : c !== 'label' })}>
                  {text}
                  {sort.by === c ? (sort.down ? ' ▾' : ' ▴') : ''}
                </button>
              </th>
            ))}
            <th className="num">share</th>
            {categoryOf && <th>what it is</th>}
          </tr>
        </thead>
        <tbody>
          {shown.map((s) => (
            <tr key={s.label} className={s.label === selected ? 'selected' : undefined} onClick={() => onSelect(s.label === selected ? null : s.label)} aria-selected={s.label === selected}>
              <td className="site" title={s.label} data-site={s.label}>
                {shortFrame(s.label)}
              </td>
              <td className="num">{formatSize(s.bytes)}</td>
              <td className="num">{s.count.toLocaleString()}</td>
              <td className="num">{formatSize(s.largest)}</td>
              <td className="num">{total > 0 ? `${((100 * s.bytes) / total).toFixed(1)}%` : '–'}</td>
              {categoryOf && (
                <td className="site-category" data-category={categoryOf.get(s.label)}>
                  {categoryOf.has(s.label) && (
                    <>
                      <span className={`cat-swatch cat-${categoryOf.get(s.label)}`} />
                      {CATEGORY_NAMES[categoryOf.get(s.label)!]}
                    </>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {sorted.length > FIRST_ROWS && (
        <button className="link" onClick={() => setAll(!all)}>
          {all ? `show the first ${FIRST_ROWS}` : `show all ${sorted.length} sites`}
        </button>
      )}
    </div>
  );
}
