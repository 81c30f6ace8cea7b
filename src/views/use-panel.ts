// A <details> panel whose open state lives in the view's look, so that share links carry it.
import type { SyntheticEvent } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { PanelId } from '../state/link-schema';
import { useSession } from '../state/session-store';

export function usePanel(id: PanelId): { open: boolean; onToggle(e: SyntheticEvent<HTMLDetailsElement>): void } {
  const { open, setPanelOpen } = useSession(useShallow((s) => ({ open: s.look.panels.includes(id), setPanelOpen: s.setPanelOpen })));
  return {
    open,
    onToggle: (e) => {
      if (e.currentTarget.open !== open) setPanelOpen(id, e.currentTarget.open);
    },
  };
}
