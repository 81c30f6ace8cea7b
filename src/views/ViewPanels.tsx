// The segment map and the timeline at the cursor.
import { useSession } from '../state/session-store';
import { Timeline } from './Timeline';

export function ViewPanels() {
  const { view, timeline, cursor, playing, seek, setPlaying } = useSession();
  return (
    <section className="views" aria-label="Memory">
      <p className="hint">
        {view?.layout.segmentAddr.length.toLocaleString() ?? 0} segments · {view?.layout.blockAddr.length.toLocaleString() ?? 0} blocks at the cursor
      </p>
      <Timeline series={timeline} cursor={cursor} onCursor={seek} playing={playing} onPlayingChange={setPlaying} />
    </section>
  );
}
