// "Which code holds the memory": the live allocations at the cursor by allocation stack (an icicle)
// and by allocation site (a table), in the replay the view shows (under a what-if, that replay's).
// A frame or a site selected marks its blocks on the segment map and draws its bytes on the timeline.
import { useMemo } from 'react';
import { firstMaxIndex } from '../lib/first-max';
import { useShallow } from 'zustand/react/shallow';
import { formatSize } from '../allocator/format-size';
import { grouped } from '../lib/grouped';
import { useSession, useViewKey } from '../state/session-store';
import { useStacks } from '../state/stack-store';
import { keyId } from '../state/view-key';
import { useStackTree } from './use-stacks';
import { NO_STACK, nodeAtPath, pathTo } from '../trace/measures/memory-by-stack';
import { shortFrame } from './frame-text';
import { SitesTable } from './SitesTable';
import { StackIcicle } from './StackIcicle';
import { usePanel } from './use-panel';
import { useMemoryKinds } from './use-memory-kinds';
import { CATEGORY_COUNT } from '../trace/categories/categories';
import './stack.css';

export function StackPanel() {
  const panel = usePanel('stacks');
  const { selection, select } = useStacks(useShallow((s) => ({ selection: s.selection, select: s.select })));
  const { tree, at, current, error } = useStackTree(panel.open);
  const key = useViewKey();
  const { timeline, seek, conf, recordedConf, sourceKind } = useSession(
    useShallow((s) => ({ timeline: s.timeline, seek: s.seek, conf: s.summary?.conf, recordedConf: s.summary?.recordedConf, sourceKind: s.summary?.sourceKind })),
  );
  // The first request at which allocated memory is highest.
  const peak = useMemo(() => (timeline && timeline.allocated.length > 0 ? firstMaxIndex(timeline.allocated) : null), [timeline]);
  const focus = tree && selection && 'path' in selection ? Math.max(0, nodeAtPath(tree, selection.path)) : 0;
  const stackless = tree !== null && tree.label.length === 2 && tree.label[1] === NO_STACK;
  const whatIf = sourceKind === 'snapshot' && conf !== recordedConf;
  // Each site's category: the one most of its live allocations are in (trace/categories).
  const kinds = useMemoryKinds(panel.open);
  const categoryOf = useMemo(() => {
    if (!tree || !kinds) return null;
    const counts = new Map<string, number[]>();
    for (let j = 0; j < tree.ids.length; j++) {
      const site = tree.label[tree.leaf[j]!]!;
      let c = counts.get(site);
      if (!c) counts.set(site, (c = new Array<number>(CATEGORY_COUNT).fill(0)));
      c[kinds.of[tree.ids[j]!] ?? CATEGORY_COUNT - 1]!++;
    }
    return new Map([...counts].map(([site, c]) => [site, c.indexOf(Math.max(...c))]));
  }, [tree, kinds]);
  return (
    <details className="stacks" {...panel} data-key={tree ? keyId(key) : undefined} data-at={at ?? undefined} aria-busy={panel.open && !current}>
      <summary>Which code holds the memory</summary>
      {panel.open && (
        <div className="stacks-body">
          <div className="stacks-head">
            <span className="stacks-at">
              {tree && at !== null ? (
                <>
                  After request <b>{grouped(at)}</b>: <b>{formatSize(tree.bytes[0]!)}</b> in {tree.blocks[0]!.toLocaleString()} live allocations
                  {whatIf && <> in the replay under <code>{conf || 'the defaults'}</code></>}
                </>
              ) : (
                'Grouping the live allocations by stack… (updating)'
              )}
            </span>
            {peak !== null && (
              <button onClick={() => seek(peak)} disabled={at === peak} title="Move the cursor to the request after which allocated memory is highest">
                Go to the peak (request {grouped(peak)})
              </button>
            )}
            {selection && (
              <span className="stacks-selected">
                selected: <b title={'site' in selection ? selection.site : selection.path.join('\n')}>{shortFrame('site' in selection ? selection.site : selection.path[selection.path.length - 1]!)}</b>{' '}
                <button className="link" onClick={() => select(null)}>
                  clear
                </button>
              </span>
            )}
          </div>
          {error && <p className="error">{error}</p>}
          {stackless && <p className="hint">This source records no allocation stacks (record with <code>torch.cuda.memory._record_memory_history()</code> to have them).</p>}
          {tree && !stackless && tree.blocks[0]! > 0 && (
            <>
              <StackIcicle tree={tree} focus={focus} onFocus={(k) => select(k === 0 ? null : { path: pathTo(tree, k) })} />
              <SitesTable
                sites={tree.sites}
                total={tree.bytes[0]!}
                selected={selection && 'site' in selection ? selection.site : null}
                categoryOf={categoryOf}
                onSelect={(site) => select(site === null ? null : { site })}
              />
            </>
          )}
          {tree && tree.blocks[0] === 0 && <p className="hint">Nothing is allocated after this request.</p>}
        </div>
      )}
    </details>
  );
}
