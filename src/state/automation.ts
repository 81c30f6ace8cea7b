// window.splitscope: the automation surface of DESIGN.md, for browser tests and scripts.
import type { LiveRunStatus } from '../gpu/stress/live-run';
import { compareIdle, useCompare } from './compare-store';
import { explore, useExplore, type ExploreAxis } from './explore-store';
import { guideIdle, useGuide } from './guide-store';
import { useSession, whenIdle } from './session-store';
import { stacksIdle, useStacks } from './stack-store';
import { recordingsIdle } from './recordings-store';
import { searchIdle, useSearch } from './search-store';
import { blockMatches } from '../trace/measures/event-search';
import type { StackSelection } from '../trace/measures/allocation-stacks';
import type { AllocationSite } from '../trace/measures/memory-by-stack';
import type { SweepRow } from '../trace/sweep/sweep';
import { BlockState } from '../trace/measures/memory-layout';
import { drawsSettled } from './draw-sync';
import { currentLink } from './share-link';
import { runSweep, sweepIdle, useSweep } from './sweep-store';
import { gpuReport, loseGpuForTest, stressIdle, useStress, type StressRequest } from './stress-store';

export interface Automation {
  ready(): Promise<void>;
  stats(): Record<string, number>;
  cursor(): { index: number; total: number };
  gpu(): { adapter: string | null; arenaBytes: number; verifiedBlocks: number; mismatches: number };
  link(): string;
  /** Blocks on the segment map freed by the program and still used by another stream (record_stream). */
  pendingFrees(): number;
  /** The stack view (its panel open): the request it is at, the live bytes, the sites by bytes, and
   * the selection's live allocations and requested bytes at the cursor. */
  stacks(): { at: number | null; bytes: number; sites: AllocationSite[]; selected: number | null; selectionBytes: number | null };
  /** Runs a search as the box does; resolves with the milliseconds until its answer and the requests it matched. */
  find(query: string): Promise<{ ms: number; requests: number }>;
  /** The search's matching requests (null: no search) and the blocks it marks at the cursor. */
  search(): { requests: number[] | null; blocks: { addr: number; size: number; state: number }[] };
  /** Selects a frame (its path from the root) or a site in the stack view. */
  selectStack(selection: StackSelection | null): void;
  /** Moves the cursor to request `index` (0-based), as the timeline does. */
  seek(index: number): void;
  /**
   * Replaces the GPU stress run with `request` and runs it to the end, verifying after every batch;
   * resolves with the run's own counters. Rejects when the request is bad.
   */
  stress(request?: StressRequest): Promise<LiveRunStatus>;
  /** Test-only: loses the GPU device mid-run, as a driver reset would. */
  loseGpu(): void;
  /** The sweep under the max_split slider, once complete. */
  sweep(): Promise<{ values: (number | null)[]; rows: (SweepRow | null)[] }>;
  /** The tuning guide once built: the current config's row and each setting tried, best first. */
  guide(): Promise<{ current: SweepRow; items: { conf: string; helps: boolean; row: SweepRow }[] } | null>;
  /** Runs the sweep explorer over `axis` (values, or `seeds` seeds) and resolves with its rows. */
  explore(axis: ExploreAxis, options?: { values?: number[]; seeds?: number }): Promise<{ values: number[]; rows: (SweepRow | null)[]; error: string | null }>;
  /** The comparison once replayed (null when closed): each config's stats at the end and at the cursor. */
  compare(): Promise<{ conf: string; stats: Record<string, number>; atCursor: Record<string, number> }[] | null>;
  /** Sweeps `values` (MiB, null = unlimited) with `workers` workers; resolves with the seconds it took. */
  timeSweep(values: (number | null)[], workers: number): Promise<number>;
}

export function installAutomation(): void {
  const surface: Automation = {
    ready: async () => {
      // A search first: it ends in a seek that the others then wait for.
      await searchIdle();
      await Promise.all([whenIdle(), compareIdle(), stressIdle()]);
      await stacksIdle();
      await recordingsIdle();
      await drawsSettled();
    },
    stats: () => ({ ...(useSession.getState().view?.stats ?? {}) }),
    cursor: () => {
      const { view, summary } = useSession.getState();
      return { index: view?.cursor ?? -1, total: summary?.requests ?? 0 };
    },
    gpu: gpuReport,
    link: currentLink,
    pendingFrees: () => {
      const state = useSession.getState().view?.layout.blockState;
      let n = 0;
      if (state) for (let i = 0; i < state.length; i++) if (state[i] === BlockState.pendingFree) n++;
      return n;
    },
    seek: (index) => useSession.getState().seek(index),
    stacks: () => {
      const { tree, at, selectedIds, series } = useStacks.getState();
      const cursor = useSession.getState().view?.cursor ?? -1;
      return {
        at,
        bytes: tree?.bytes[0] ?? 0,
        sites: tree?.sites ?? [],
        selected: selectedIds?.size ?? null,
        selectionBytes: series && cursor >= 0 ? series[cursor]! : null,
      };
    },
    selectStack: (selection) => useStacks.getState().select(selection),
    find: async (query) => {
      const t0 = performance.now();
      await useSearch.getState().search(query);
      return { ms: performance.now() - t0, requests: useSearch.getState().requests?.length ?? 0 };
    },
    search: () => {
      const { query, requests, ids } = useSearch.getState();
      const layout = useSession.getState().view?.layout;
      const blocks: { addr: number; size: number; state: number }[] = [];
      if (query && layout) {
        for (let b = 0; b < layout.blockAddr.length; b++) {
          if (blockMatches(query, layout.blockAddr[b]!, layout.blockSize[b]!, layout.blockRequested[b]!, layout.blockId[b]!, ids)) {
            blocks.push({ addr: layout.blockAddr[b]!, size: layout.blockSize[b]!, state: layout.blockState[b]! });
          }
        }
      }
      return { requests: requests ? [...requests] : null, blocks };
    },
    stress: async (request) => {
      const run = await useStress.getState().start(request);
      if (!run) throw new Error(useStress.getState().error ?? 'The stress run did not start.');
      await run.play();
      return run.status();
    },
    loseGpu: loseGpuForTest,
    sweep: async () => {
      await Promise.all([whenIdle(), sweepIdle()]);
      const { values, rows } = useSweep.getState();
      return { values, rows };
    },
    guide: async () => {
      await Promise.all([whenIdle(), sweepIdle()]);
      await guideIdle();
      const g = useGuide.getState().guide;
      return g && { current: g.current, items: g.items.map((i) => ({ conf: i.conf, helps: i.helps, row: i.row })) };
    },
    explore: async (axis, options) => {
      await whenIdle();
      await explore(axis, options ?? {});
      const { values, rows, error } = useExplore.getState();
      return { values, rows, error };
    },
    compare: async () => {
      await Promise.all([whenIdle(), compareIdle()]);
      const { runs, views } = useCompare.getState();
      return runs?.map((r, i) => ({ conf: r.conf, stats: { ...r.stats }, atCursor: { ...(views?.[i]?.stats ?? {}) } })) ?? null;
    },
    timeSweep: async (values, workers) => {
      // Alone: the guide a finished sweep starts would take a core from it.
      await Promise.all([whenIdle(), sweepIdle()]);
      await guideIdle();
      await runSweep(values, workers);
      return useSweep.getState().seconds ?? NaN;
    },
  };
  (window as unknown as { splitscope: Automation }).splitscope = surface;
}
