// window.splitscope: the automation surface of DESIGN.md, for browser tests and scripts.
import type { LiveRunStatus } from '../gpu/stress/live-run';
import { compareAtQuery, compareRunsQuery } from './compare-store';
import { explore, exploreQuery, useExplore, type ExploreAxis } from './explore-store';
import { guideQuery } from './guide';
import { currentKey, replayIsCurrent, useSession, whenIdle } from './session-store';
import { stackSeriesQuery, stackTreeQuery, idsOf, useStacks } from './stack-store';
import { digestsRunning } from './recordings-store';
import { search, searchQuery, useSearch } from './search-store';
import { blockMatches } from '../trace/measures/event-search';
import type { StackSelection } from '../trace/measures/allocation-stacks';
import type { AllocationSite } from '../trace/measures/memory-by-stack';
import type { SweepRow } from '../trace/sweep/sweep';
import { BlockState } from '../trace/measures/memory-layout';
import { derived, derivedIdle, failure } from './derived';
import { drawsSettled, nextFrame } from './draw-sync';
import { workerBusy } from './replay-client';
import { currentLink, linkOpened } from './share-link';
import { sweepQuery, timeSweep } from './sweep';
import { gpuReport, loseGpuForTest, stressIdle, useStress, type StressRequest } from './stress-store';
import { keyId, sourceKeyOf } from './view-key';

export interface Automation {
  ready(): Promise<void>;
  /** Resolves once the replay (or seek) of the current key is on screen and drawn, not waiting for the
   * results derived from it (the sweep, the guide...): what a user sees move first (the benches' clock). */
  viewReady(): Promise<void>;
  /** The view key on screen (the source and the settings asked for), as panels write it in data-key. */
  key(): string;
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
  /** The digests being made now (another recording or a rank, each in a worker of its own): file and config. */
  digests(): { file: string; conf: string | null }[];
}

/** Something asked for is still being worked on: a replay, a seek, a derived result. */
const busy = (): boolean => workerBusy() || derived.isFetching() > 0 || !replayIsCurrent();

/**
 * Resolves once the work the current state asked for is done: the replay of the current key, every
 * derived result a panel asks for (which start once React has rendered the new key), the GPU's
 * pending batch, and the drawing.
 */
async function ready(): Promise<void> {
  await linkOpened();
  for (let round = 0; round < 200; round++) {
    await whenIdle();
    // React commits the latest state; the panels' queries for the new key start from that render.
    await nextFrame();
    await derivedIdle();
    await stressIdle();
    await whenIdle();
    const { summary, opening, playing } = useSession.getState();
    // A playing source keeps the worker busy with its seeks: one pass, not a wait for its end.
    if (!busy() || playing || (!summary && !opening)) break;
  }
  await drawsSettled();
}

/** A summary of the current key's replay (once on screen). */
async function shown() {
  await ready();
  const { summary } = useSession.getState();
  if (!summary) throw new Error('Nothing is open.');
  return summary;
}

export function installAutomation(): void {
  const surface: Automation = {
    ready,
    viewReady: async () => {
      await linkOpened();
      for (;;) {
        await whenIdle();
        if (replayIsCurrent() || !(useSession.getState().summary || useSession.getState().opening)) break;
        await nextFrame();
      }
      await drawsSettled();
    },
    key: () => keyId(currentKey()),
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
      const key = currentKey();
      const cursor = useSession.getState().view?.cursor ?? -1;
      const tree = derived.getQueryData(stackTreeQuery(key, cursor).queryKey)?.tree ?? null;
      const selection = useStacks.getState().selection;
      const series = selection ? derived.getQueryData(stackSeriesQuery(key, selection).queryKey) : undefined;
      return {
        at: tree ? cursor : null,
        bytes: tree?.bytes[0] ?? 0,
        sites: tree?.sites ?? [],
        selected: idsOf(tree, selection)?.size ?? null,
        selectionBytes: series && cursor >= 0 ? series[cursor]! : null,
      };
    },
    selectStack: (selection) => useStacks.getState().select(selection),
    find: async (query) => {
      const t0 = performance.now();
      const result = await search(query);
      return { ms: performance.now() - t0, requests: result?.requests.length ?? 0 };
    },
    search: () => {
      const input = useSearch.getState().input;
      const result = input ? derived.getQueryData(searchQuery(sourceKeyOf(currentKey()), input).queryKey) : undefined;
      const layout = useSession.getState().view?.layout;
      const blocks: { addr: number; size: number; state: number }[] = [];
      if (result?.query && layout) {
        for (let b = 0; b < layout.blockAddr.length; b++) {
          if (blockMatches(result.query, layout.blockAddr[b]!, layout.blockSize[b]!, layout.blockRequested[b]!, layout.blockId[b]!, result.ids)) {
            blocks.push({ addr: layout.blockAddr[b]!, size: layout.blockSize[b]!, state: layout.blockState[b]! });
          }
        }
      }
      return { requests: result ? [...result.requests] : null, blocks };
    },
    stress: async (request) => {
      const run = await useStress.getState().start(request);
      if (!run) throw new Error(useStress.getState().error ?? 'The stress run did not start.');
      await run.play();
      return run.status();
    },
    loseGpu: loseGpuForTest,
    sweep: async () => {
      const summary = await shown();
      const { values, rows } = await derived.fetchQuery(sweepQuery(currentKey(), summary.recordedConf));
      return { values, rows };
    },
    guide: async () => {
      const summary = await shown();
      const g = await derived.fetchQuery(guideQuery(currentKey(), summary.recordedConf));
      return g && { current: g.current, items: g.items.map((i) => ({ conf: i.conf, helps: i.helps, row: i.row })) };
    },
    explore: async (axis, options) => {
      await shown();
      explore(axis, options ?? {});
      const { asked } = useExplore.getState();
      try {
        const rows = await derived.fetchQuery(exploreQuery(currentKey(), asked!.axis, asked!.values));
        return { values: asked!.values, rows, error: null };
      } catch (e) {
        return { values: asked!.values, rows: [], error: failure(e) ?? String(e) };
      }
    },
    compare: async () => {
      await shown();
      const { compare: confs, cursor } = useSession.getState();
      if (!confs) return null;
      const key = currentKey();
      const runs = await derived.fetchQuery(compareRunsQuery(key, confs, cursor));
      const views = await derived.fetchQuery(compareAtQuery(key, confs, cursor));
      return runs.map((r, i) => ({ conf: r.conf, stats: { ...r.stats }, atCursor: { ...(views[i]?.stats ?? {}) } }));
    },
    timeSweep: async (values, workers) => {
      // Alone: the sweep and guide the view asked for would take a core from it.
      return timeSweep(await shown(), values, workers);
    },
    digests: digestsRunning,
  };
  (window as unknown as { splitscope: Automation }).splitscope = surface;
}
