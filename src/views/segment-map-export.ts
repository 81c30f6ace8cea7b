// The segment map as a file: its rectangles at the current zoom as SVG rects under its ruler and lane
// labels (the on-screen overlay, styles inlined).
import type { MapRect } from '../gpu/segment-map/segment-map-rects';
import { DIMMED_CSS, HATCH_COLOR, PALETTE } from '../gpu/segment-map/segment-map-palette';
import { standaloneSvg } from './svg-export';

export interface ExportableMap {
  overlay(): SVGSVGElement | null;
  /** Offset of the canvas below the overlay's top, px. */
  top: number;
  rects(each: (r: MapRect) => void): void;
}

const maps: ExportableMap[] = [];

/** A segment map on the page offers itself for export; returns its withdrawal. */
export function registerExportableMap(map: ExportableMap): () => void {
  maps.push(map);
  return () => {
    const i = maps.indexOf(map);
    if (i >= 0) maps.splice(i, 1);
  };
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The first segment map on the page (the main one) as a standalone SVG. */
export function segmentMapSvg(): string {
  const map = maps[0];
  const overlay = map?.overlay();
  if (!map || !overlay) throw new Error('There is no segment map to export yet.');
  const doc = new DOMParser().parseFromString(standaloneSvg(overlay), 'image/svg+xml');
  const svg = doc.documentElement;
  const defs = doc.createElementNS(SVG_NS, 'defs');
  // The hatching over an oversize block, dimmed with the block where a selection leaves it unmarked
  // (as the shader draws it: the stripes mixed in, then the whole dimmed).
  const pattern = (id: string, color: string): string =>
    `<pattern id="${id}" width="7" height="7" patternUnits="userSpaceOnUse"><path d="M0,7 L7,0" stroke="${color}" stroke-width="2"/></pattern>`;
  defs.innerHTML = pattern('oversize', PALETTE[HATCH_COLOR]!.css) + pattern('oversize-dimmed', DIMMED_CSS[HATCH_COLOR]!);
  const g = doc.createElementNS(SVG_NS, 'g');
  g.setAttribute('transform', `translate(0,${map.top})`);
  const parts: string[] = [];
  const n = (x: number): string => String(Math.round(x * 100) / 100);
  map.rects((r) => {
    const box = `x="${n(r.left)}" y="${n(r.top)}" width="${n(r.width)}" height="${n(r.height)}"`;
    parts.push(`<rect ${box} fill="${r.dimmed ? DIMMED_CSS[r.palette]! : PALETTE[r.palette]!.css}"/>`);
    if (r.oversize) parts.push(`<rect ${box} fill="url(#${r.dimmed ? 'oversize-dimmed' : 'oversize'})"/>`);
  });
  g.innerHTML = parts.join('');
  // Under the ruler and labels (after the background rect standaloneSvg put first).
  svg.insertBefore(defs, svg.children[1] ?? null);
  svg.insertBefore(g, defs.nextSibling);
  // The highlight of a pinned block is an on-screen aid.
  svg.querySelector('.segment-map-highlight')?.remove();
  return new XMLSerializer().serializeToString(svg);
}
