// The segment map and the timeline at the cursor; with several streams, a selector shows one of them.
import { useId, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { allocationFrames, useSession } from '../state/session-store';
import { useSearch } from '../state/search-store';
import { useStacks } from '../state/stack-store';
import { blockMatches } from '../trace/measures/event-search';
import { BlockState, layoutOfStream, layoutStreams } from '../trace/measures/memory-layout';
import { shortFrame } from './frame-text';
import { SearchBox } from './SearchBox';
import { SegmentMap, type BlockMark } from './SegmentMap';
import { Timeline, type TimelineOverlay } from './Timeline';

const ALL = 'all';

export function ViewPanels() {
  const { view, timeline, cursor, playing, seek, setPlaying, look, setZoom, setPinned, emptyCacheAfter, resetPeakAfter, recordedCalls, axis, loadRequestTimes } = useSession(
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
      axis: s.axis,
      loadRequestTimes: s.loadRequestTimes,
    })),
  );
  // A stack view's selection, while its panel is open: its blocks marked, its bytes drawn.
  const stacksOpen = look.panels.includes('stacks');
  const { selectedIds, selection, selectionSeries } = useStacks(useShallow((s) => ({ selectedIds: s.selectedIds, selection: s.selection, selectionSeries: s.series })));
  // A search marks its blocks (it was typed to be seen), else the stack view's selection does.
  const { query, searchIds, matched } = useSearch(useShallow((s) => ({ query: s.query, searchIds: s.ids, matched: s.requests })));
  const mark = useMemo<BlockMark | null>(() => {
    if (query && matched) return (l, b) => blockMatches(query, l.blockAddr[b]!, l.blockSize[b]!, l.blockRequested[b]!, l.blockId[b]!, searchIds);
    return stacksOpen && selectedIds ? (l, b) => selectedIds.has(l.blockId[b]!) && l.blockState[b] === BlockState.allocated : null;
  }, [query, matched, searchIds, stacksOpen, selectedIds]);
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
  const searchMarked = useMemo(() => {
    if (!query || !matched || !shown || !mark) return null;
    let n = 0;
    for (let b = 0; b < shown.blockAddr.length; b++) if (mark(shown, b)) n++;
    return n;
  }, [query, matched, shown, mark]);
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
                {s === 0 ? 'default stream (0)' : `stream ${s}`}
              </option>
            ))}
          </select>
          <span className="hint">memory_stats() are per device: they count every stream.</span>
        </div>
      )}
      <SegmentMap
        layout={shown}
        cursor={view?.cursor ?? 0}
        frames={allocationFrames}
        zoom={look.zoom}
        onZoom={setZoom}
        pinned={look.pinned}
        onPin={setPinned}
        mark={mark}
      />
      <Timeline series={timeline} cursor={cursor} onCursor={seek} playing={playing} onPlayingChange={setPlaying} calls={calls}
        overlay={overlay}
        marks={query ? matched : null}
        timed={axis?.timed ?? false}
        time={axis?.time ?? null}
        onWantTime={loadRequestTimes}
        {...(axis ? { annotations: axis.annotations } : {})}
      />
    </section>
  );
}
