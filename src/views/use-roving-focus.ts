// One tab stop for a list of items (WAI-ARIA's roving tabindex): Tab reaches the item last focused
// (the first to begin with) and a second Tab leaves the list; ArrowUp and ArrowDown move between the
// items, Home and End go to the first and the last. The items are the container's elements matching
// a selector, so they may sit in different rows and tables.
import { useLayoutEffect, useRef, type FocusEvent, type KeyboardEvent } from 'react';

const MOVES: Record<string, (i: number, last: number) => number> = {
  ArrowUp: (i) => Math.max(0, i - 1),
  ArrowDown: (i, last) => Math.min(last, i + 1),
  Home: () => 0,
  End: (_, last) => last,
};

export function useRovingFocus<T extends HTMLElement>(selector: string) {
  const ref = useRef<T>(null);
  // The current item's index: moving it changes only tabIndex attributes, never what is drawn.
  const current = useRef(0);
  const items = (): HTMLElement[] => [...(ref.current?.querySelectorAll<HTMLElement>(selector) ?? [])];
  const mark = (list: HTMLElement[]): void => {
    const stop = Math.min(current.current, list.length - 1);
    list.forEach((el, i) => (el.tabIndex = i === stop ? 0 : -1));
  };
  // After every render: items come and go (a section's heading), and React sets no tabIndex on them.
  useLayoutEffect(() => mark(items()));
  return {
    ref,
    onFocus(e: FocusEvent) {
      const list = items();
      const i = list.indexOf(e.target as HTMLElement);
      if (i < 0) return;
      current.current = i;
      mark(list);
    },
    onKeyDown(e: KeyboardEvent) {
      const list = items();
      const i = list.indexOf(e.target as HTMLElement);
      const move = MOVES[e.key];
      if (i < 0 || !move || e.altKey || e.ctrlKey || e.metaKey) return;
      // Taken here: the timeline's keys anywhere on the page (Home, End) leave a handled key alone.
      e.preventDefault();
      list[move(i, list.length - 1)]!.focus();
    },
  };
}
