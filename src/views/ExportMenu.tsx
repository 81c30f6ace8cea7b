// Exports: the replayed run as a PyTorch snapshot (pickle for pytorch.org/memory_viz, or JSON, gzipped), the
// sweep as CSV, the timeline, the segment map (at its zoom) and a prediction's chart as SVG or PNG, each
// picture captioned (the file, the config, the cap, the cursor) and with its legend, to stand alone.
import { useState } from 'react';
import { usePanel } from './use-panel';
import { exportRun, useSession } from '../state/session-store';
import { useSweep } from './use-sweep';
import type { SweepRow } from '../trace/sweep/sweep';
import { sweepCsv } from '../trace/sweep/sweep-csv';
import { segmentMapSvg } from './segment-map-export';
import { download, framedSvg, legendOf, standaloneSvg, svgToPng } from './svg-export';
import { exportCaption } from './export-caption';

/** Bytes gzip-compressed, as a file's contents (the browser's own CompressionStream). */
const gzipped = (bytes: Uint8Array<ArrayBuffer>): Promise<Blob> =>
  new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'))).blob().then((b) => new Blob([b], { type: 'application/gzip' }));

/** A file name from the source's name: "GPT-2 training (x)" -> "gpt-2-training-x". */
const slug = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'splitscope';

export function ExportMenu() {
  const source = useSession((s) => s.summary?.source ?? '');
  const [problem, setProblem] = useState<string | null>(null);
  const panel = usePanel('export');
  const { sweep } = useSweep();
  const base = slug(source);
  const run = (job: () => Promise<void>) => () => {
    setProblem(null);
    job().catch((e: Error) => setProblem(e.message));
  };
  const framed = (picture: string, what: string, legend: Element | null): string => {
    const { summary, cursor } = useSession.getState();
    return summary ? framedSvg(picture, exportCaption(summary, cursor, what), legendOf(legend)) : picture;
  };
  const timelineSvg = (): string => {
    const svg = document.querySelector<SVGSVGElement>('[aria-label="Timeline"] svg');
    if (!svg) throw new Error('There is no timeline to export yet.');
    return framed(standaloneSvg(svg), 'Timeline', document.querySelector('[aria-label="Timeline"] .tl-legend'));
  };
  const mapSvg = (): string => framed(segmentMapSvg(), 'Segment map', document.querySelector('.segment-map-legend'));
  const hasPrediction = useSession((s) => s.summary?.prediction !== undefined);
  const predictionSvg = (): string => {
    const svg = document.querySelector<SVGSVGElement>('svg[aria-label="Prediction chart"]');
    if (!svg) throw new Error('Open the prediction chart first: it is drawn where it is open.');
    // Its title, axes and legend are its own.
    return framed(standaloneSvg(svg), 'Prediction chart', null);
  };
  return (
    <details className="export" {...panel}>
      <summary>Export…</summary>
      <div className="export-items">
        <button onClick={run(async () => download(`${base}.pickle`, new Blob([await exportRun('pickle')])))}>Snapshot (.pickle, memory_viz)</button>
        <button
          title="PyTorch's snapshot dict as JSON, gzip-compressed. JSON has no references, so each entry's stack is written out in full (the pickle shares them): uncompressed it is many times the pickle's size, compressed about the same"
          onClick={run(async () => download(`${base}.json.gz`, await gzipped(await exportRun('json'))))}
        >
          Snapshot (.json.gz)
        </button>
        <button
          onClick={run(async () => {
            const rows = sweep?.done ? sweep.rows.filter((r): r is SweepRow => r !== null) : [];
            if (rows.length === 0) throw new Error('The sweep has not finished yet.');
            download(`${base}-sweep.csv`, new Blob([sweepCsv(rows)], { type: 'text/csv' }));
          })}
        >
          Sweep (.csv)
        </button>
        <button onClick={run(async () => download(`${base}-timeline.svg`, new Blob([timelineSvg()], { type: 'image/svg+xml' })))}>Timeline (.svg)</button>
        <button onClick={run(async () => download(`${base}-timeline.png`, await svgToPng(timelineSvg())))}>Timeline (.png)</button>
        {hasPrediction && (
          <>
            <button onClick={run(async () => download(`${base}-prediction.svg`, new Blob([predictionSvg()], { type: 'image/svg+xml' })))}>Prediction chart (.svg)</button>
            <button onClick={run(async () => download(`${base}-prediction.png`, await svgToPng(predictionSvg())))}>Prediction chart (.png)</button>
          </>
        )}
        <button onClick={run(async () => download(`${base}-segment-map.svg`, new Blob([mapSvg()], { type: 'image/svg+xml' })))}>Segment map (.svg)</button>
        <button onClick={run(async () => download(`${base}-segment-map.png`, await svgToPng(mapSvg())))}>Segment map (.png)</button>
      </div>
      {problem && <p className="error">{problem}</p>}
    </details>
  );
}
