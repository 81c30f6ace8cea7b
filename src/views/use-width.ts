// An element's width in whole CSS px, kept current as it resizes (charts draw to it).
import { useEffect, useState, type RefObject } from 'react';

export function useWidth(ref: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const ro = new ResizeObserver(([e]) => setWidth(Math.floor(e!.contentRect.width)));
    ro.observe(ref.current!);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}
