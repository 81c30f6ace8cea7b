// The segment map and the timeline at the cursor.
import { useShallow } from 'zustand/react/shallow';
import { allocationFrames, useSession } from '../state/session-store';
import { SegmentMap } from './SegmentMap';
import { Timeline } from './Timeline';

export function ViewPanels() {
  const { view, timeline, cursor, playing, seek, setPlaying } = useSession(
    // Only what this panel shows: the store changes often (busy, cursor) and other panels need not redraw.
    useShallow((s) => ({ view: s.view, timeline: s.timeline, cursor: s.cursor, playing: s.playing, seek: s.seek, setPlaying: s.setPlaying })),
  );
  return (
    <section className="views" aria-label="Memory">
      <SegmentMap layout={view?.layout ?? null} cursor={view?.cursor ?? 0} frames={allocationFrames} />
      <Timeline series={timeline} cursor={cursor} onCursor={seek} playing={playing} onPlayingChange={setPlaying} />
    </section>
  );
}
