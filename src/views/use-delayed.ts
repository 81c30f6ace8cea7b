// A flag seen only once it has held for a while: "updating…" shown at once on every slider step made
// each step repaint the panels it dims twice (measured: 212-229 -> 297-326 ms median a step on the 470k
// trace in an Xvfb window, where SwiftShader composites on the CPU), for a state that lasts a frame or
// two. aria-busy still says it at once.
import { useEffect, useState } from 'react';

/** Dims and "updating…" wait this long. */
export const UPDATING_AFTER_MS = 200;

export function useDelayed(flag: boolean, ms = UPDATING_AFTER_MS): boolean {
  const [held, setHeld] = useState(false);
  useEffect(() => {
    if (!flag) {
      setHeld(false);
      return;
    }
    const timer = setTimeout(() => setHeld(true), ms);
    return () => clearTimeout(timer);
  }, [flag, ms]);
  return flag && held;
}
