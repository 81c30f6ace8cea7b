// The segment map and the timeline at the cursor.
import { allocationFrames, useSession } from '../state/session-store';
import { SegmentMap } from './SegmentMap';
import { Timeline } from './Timeline';

export function ViewPanels() {
  const { view, timeline, cursor, playing, seek, setPlaying } = useSession();
  return (
    <section className="views" aria-label="Memory">
      <SegmentMap layout={view?.layout ?? null} cursor={view?.cursor ?? 0} frames={allocationFrames} />
      <Timeline series={timeline} cursor={cursor} onCursor={seek} playing={playing} onPlayingChange={setPlaying} />
    </section>
  );
}
