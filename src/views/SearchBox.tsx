// The search box above the segment map: an address, a size range or frame text. Enter searches and
// steps to the next matching request (Shift+Enter: the previous); Escape clears.
import { useEffect, useId, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { formatSize } from '../allocator/format-size';
import { failure } from '../state/derived';
import { clearSearch, find, searchQuery, stepMatch, useSearch } from '../state/search-store';
import { useSourceKey } from '../state/session-store';
import type { SearchQuery } from '../trace/measures/event-search';

function describe(q: SearchQuery): string {
  if (q.kind === 'address') return `the address 0x${q.address.toString(16)}`;
  if (q.kind === 'text') return `frames containing “${q.text}”`;
  // The size asked for, on the list and the map alike: a block can be larger (rounded up, or the rest of a segment).
  if (q.min === q.max) return `requests for ${formatSize(q.min)} (the size asked, not the block's)`;
  if (q.max === Infinity) return `requests for ${formatSize(q.min)} or more (the size asked, not the block's)`;
  return `requests for ${formatSize(q.min)} to ${formatSize(q.max)} (the size asked, not the block's)`;
}

export function SearchBox({ marked }: { marked: number | null }) {
  const input = useSearch((s) => s.input);
  const sourceKey = useSourceKey();
  const q = useQuery({ ...searchQuery(sourceKey, input), enabled: input !== '' });
  const result = input ? q.data : undefined;
  const query = result?.query ?? null;
  const requests = result?.requests ?? null;
  const error = input ? failure(q.error) : null;
  const step = (direction: 1 | -1): void => stepMatch(result, direction);
  const [text, setText] = useState(input);
  const id = useId();
  // The box shows what was last searched, wherever it came from (a link, a cleared search).
  useEffect(() => setText(input), [input]);
  return (
    <div className="search" role="search">
      <label htmlFor={id}>find</label>
      <input
        id={id}
        type="search"
        value={text}
        placeholder="an address (0x7f…), a size (>1GiB, 2MB..8MB) or text of a frame"
        spellCheck={false}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            setText('');
            clearSearch();
          } else if (e.key === 'Enter') {
            e.preventDefault();
            void find(text, e.shiftKey ? -1 : 1);
          }
        }}
      />
      {query && requests && (
        <span className="search-result" aria-live="polite">
          {describe(query)}: {requests.length.toLocaleString()} matching request{requests.length === 1 ? '' : 's'}
          {marked !== null && ` · ${marked.toLocaleString()} block${marked === 1 ? '' : 's'} here`}{' '}
          <button type="button" onClick={() => step(-1)} disabled={requests.length === 0} aria-label="Previous match" title="Previous match (Shift+Enter)">
            ↑
          </button>
          <button type="button" onClick={() => step(1)} disabled={requests.length === 0} aria-label="Next match" title="Next match (Enter)">
            ↓
          </button>
        </span>
      )}
      {error && <span className="error">{error}</span>}
    </div>
  );
}
