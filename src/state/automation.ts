// window.splitscope: the read-only automation surface of DESIGN.md, for browser tests and scripts.
import { useSession, whenIdle } from './session-store';

export interface Automation {
  ready(): Promise<void>;
  stats(): Record<string, number>;
  cursor(): { index: number; total: number };
  gpu(): { adapter: string | null; arenaBytes: number; verifiedBlocks: number; mismatches: number };
  link(): string;
}

export function installAutomation(): void {
  const surface: Automation = {
    ready: () => whenIdle(),
    stats: () => ({ ...(useSession.getState().summary?.stats ?? {}) }),
    cursor: () => {
      const total = useSession.getState().summary?.requests ?? 0;
      return { index: total - 1, total };
    },
    // The GPU arena is not built yet: no adapter is used.
    gpu: () => ({ adapter: null, arenaBytes: 0, verifiedBlocks: 0, mismatches: 0 }),
    link: () => window.location.href,
  };
  (window as unknown as { splitscope: Automation }).splitscope = surface;
}
