// The segment map and the timeline at the cursor; with several streams, a selector shows one of them.
import { useId, useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useShallow } from 'zustand/react/shallow';
import { callWorker } from '../state/replay-client';
import { allocationFrames, useSession, useSourceKey } from '../state/session-store';
import { searchQuery, useSearch } from '../state/search-store';
import { idsOf, useStacks } from '../state/stack-store';
import { keyId, sourceKeyOf, sourceParts } from '../state/view-key';
import { useSelectionSeries, useStackTree } from './use-stacks';
import { blockMatches } from '../trace/measures/event-search';
import { BlockState, layoutOfStream, layoutStreams } from '../trace/measures/memory-layout';
import { shortFrame } from './frame-text';
import { SearchBox } from './SearchBox';
import { blockMarks, SegmentMap, type BlockMark } from './SegmentMap';
import { Timeline, type TimelineLayers, type TimelineOverlay } from './Timeline';
import { useMemoryKinds } from './use-memory-kinds';
import { bytesByCategoryIn, CATEGORY_NAMES } from '../trace/categories/categories';
import { grouped } from '../lib/grouped';

const ALL = 'all';

export function ViewPanels() {
  const { view, timeline, cursor, playing, seek, setPlaying, look, setZoom, setPinned, emptyCacheAfter, resetPeakAfter, recordedCalls, cap } = useSession(
    // Only what this panel shows: the store changes often (busy, cursor) and other panels need not redraw.
    useShallow((s) => ({
      view: s.view,
      timeline: s.timeline,
      cursor: s.cursor,
      playing: s.playing,
      seek: s.seek,
      setPlaying: s.setPlaying,
      look: s.look,
      setZoom: s.setZoom,
      setPinned: s.setPinned,
      emptyCacheAfter: s.settings.emptyCacheAfter,
      resetPeakAfter: s.settings.resetPeakAfter,
      recordedCalls: s.summary?.recordedEmptyCache,
      cap: s.summary?.capacity?.kind === 'fraction' ? s.summary.capacity.bytes : null,
    })),
  );
  const sourceKey = useSourceKey();
  // What the memory is: the timeline stacked by category, and one category's blocks marked on the map.
  const [byCategory, setByCategory] = useState(true);
  const [category, setCategory] = useState<number | null>(null);
  const kinds = useMemoryKinds(byCategory || category !== null);
  // The legend's figures at the cursor: the view's blocks by category, as the stats panel counts them.
  const summaryKey = useSession((s) => s.summary?.key);
  const atCursor = useMemo(
    () => (kinds && view && summaryKey && keyId(sourceKeyOf(view.key)) === keyId(sourceKeyOf(summaryKey)) ? bytesByCategoryIn(view.layout, kinds.of) : null),
    [kinds, view, summaryKey],
  );
  const layers = useMemo<TimelineLayers | null>(() => (byCategory && kinds ? { rows: kinds.stacked, names: CATEGORY_NAMES, atCursor } : null), [byCategory, kinds, atCursor]);
  // The trace's own time axis and phases: the same under every config, one per source and device.
  const axis = useQuery({ queryKey: ['axis', sourceKey.source, ...sourceParts(sourceKey)], queryFn: () => callWorker((w) => w.timeAxis(sourceKey)) }).data;
  const [wantTime, setWantTime] = useState(false);
  const time = useQuery({ queryKey: ['times', sourceKey.source, ...sourceParts(sourceKey)], queryFn: () => callWorker((w) => w.requestTimes(sourceKey)), enabled: wantTime && (axis?.timed ?? false) }).data ?? null;
  // A stack view's selection, while its panel is open: its blocks marked, its bytes drawn.
  const stacksOpen = look.panels.includes('stacks');
  const selection = useStacks((s) => s.selection);
  const { tree } = useStackTree(stacksOpen && selection !== null);
  const selectedIds = useMemo(() => idsOf(tree, selection), [tree, selection]);
  const selectionSeries = useSelectionSeries(stacksOpen);
  // A search marks its blocks (it was typed to be seen), else the stack view's selection does.
  const input = useSearch((s) => s.input);
  const found = useQuery({ ...searchQuery(sourceKey, input), enabled: input !== '' }).data;
  const query = input ? (found?.query ?? null) : null;
  const searchIds = found?.ids ?? null;
  const matched = input ? (found?.requests ?? null) : null;
  const of = kinds?.of ?? null;
  const mark = useMemo<BlockMark | null>(() => {
    if (query && matched) return (l, b) => blockMatches(query, l.blockAddr[b]!, l.blockSize[b]!, l.blockRequested[b]!, l.blockId[b]!, searchIds);
    if (category !== null && of) return (l, b) => l.blockState[b] === BlockState.allocated && of[l.blockId[b]!] === category;
    return stacksOpen && selectedIds ? (l, b) => selectedIds.has(l.blockId[b]!) && l.blockState[b] === BlockState.allocated : null;
  }, [query, matched, searchIds, stacksOpen, selectedIds, category, of]);
  const categoryId = useId();
  const overlay = useMemo<TimelineOverlay | null>(
    () =>
      stacksOpen && selection && selectionSeries
        ? { series: selectionSeries, label: shortFrame('site' in selection ? selection.site : selection.path[selection.path.length - 1]!) }
        : null,
    [stacksOpen, selection, selectionSeries],
  );
  // Inserted calls and the recording's own empty_cache() calls, marked alike.
  const calls = useMemo(
    () => [...(emptyCacheAfter ?? []), ...(resetPeakAfter ?? []), ...(recordedCalls ?? [])],
    [emptyCacheAfter, resetPeakAfter, recordedCalls],
  );
  const streamId = useId();
  const [stream, setStream] = useState<string>(ALL);
  const layout = view?.layout ?? null;
  const streams = useMemo(() => (layout ? layoutStreams(layout) : []), [layout]);
  const chosen = stream !== ALL && streams.includes(Number(stream)) ? Number(stream) : null;
  const shown = useMemo(() => (layout && chosen !== null ? layoutOfStream(layout, chosen) : layout), [layout, chosen]);
  // The blocks marked, once per layout and selection: the map draws them, the counts beside it read them.
  const marked = useMemo(() => (shown && mark ? blockMarks(shown, mark) : null), [shown, mark]);
  const searchMarked = query && matched ? (marked?.count ?? null) : null;
  const categoryMarked = !(query && matched) && category !== null && of ? (marked?.count ?? null) : null;
  return (
    <section className="views" aria-label="Memory">
      <SearchBox marked={searchMarked} />
      {streams.length > 1 && (
        <div className="stream-select">
          <label htmlFor={streamId}>stream</label>
          <select id={streamId} value={chosen === null ? ALL : String(chosen)} onChange={(e) => setStream(e.target.value)}>
            <option value={ALL}>all {streams.length} streams</option>
            {streams.map((s) => (
              <option key={s} value={String(s)}>
                {s === 0 ? 'default stream (0)' : `side stream ${streams.filter((x) => x !== 0).indexOf(s) + 1} (handle ${s})`}
              </option>
            ))}
          </select>
          <span className="hint">memory_stats() are per device: they count every stream.</span>
        </div>
      )}
      <div className="memory-kinds">
        <label>
          <input type="checkbox" checked={byCategory} onChange={(e) => setByCategory(e.target.checked)} /> timeline by what the memory is
        </label>
        <label htmlFor={categoryId}>mark on the map</label>
        <select id={categoryId} value={category === null ? '' : String(category)} onChange={(e) => setCategory(e.target.value === '' ? null : Number(e.target.value))}>
          <option value="">nothing</option>
          {CATEGORY_NAMES.map((name, c) => (
            <option key={name} value={c}>
              {name}
            </option>
          ))}
        </select>
        {categoryMarked !== null && <output className="category-marked">{grouped(categoryMarked)} blocks marked</output>}
        <span className="hint" title="From where each allocation was made and freed: the forward pass, backward, the optimizer step, model setup (splitscope explain says more)">
          categories from the stacks
        </span>
      </div>
      <SegmentMap
        layout={shown}
        cursor={view?.cursor ?? 0}
        frames={allocationFrames}
        zoom={look.zoom}
        onZoom={setZoom}
        pinned={look.pinned}
        onPin={setPinned}
        marked={marked}
      />
      <Timeline series={timeline} cursor={cursor} onCursor={seek} playing={playing} onPlayingChange={setPlaying} calls={calls}
        overlay={overlay}
        marks={query ? matched : null}
        timed={axis?.timed ?? false}
        time={time}
        onWantTime={() => setWantTime(true)}
        cap={cap}
        layers={layers}
        {...(axis ? { annotations: axis.annotations } : {})}
      />
    </section>
  );
}
