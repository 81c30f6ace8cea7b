// Colours of the segment map, shared by the WebGPU shader (as a uniform), the Canvas 2D fallback and
// the legend. Mid-tone hues that read on both the light and the dark page (`color-scheme: light dark`);
// the canvas is transparent, so the page's own background shows between segments.
import { BAND_COLOR } from '../../plot/segment-map-geometry';

export interface PaletteEntry {
  /** CSS colour. */
  css: string;
  rgba: [number, number, number, number];
}

function hex(css: string, alpha = 1): PaletteEntry {
  const n = parseInt(css.slice(1), 16);
  return { css: alpha === 1 ? css : `rgb(${n >> 16} ${(n >> 8) & 255} ${n & 255} / ${alpha})`, rgba: [(n >> 16) / 255, ((n >> 8) & 255) / 255, (n & 255) / 255, alpha] };
}

/** Indexed by BlockState (0..3), then the segment band, then the oversize hatching. */
export const PALETTE: readonly PaletteEntry[] = [
  hex('#4e79a7'), // allocated
  hex('#f28e2b'), // cached free inside a split segment: the fragmentation to look at
  hex('#59a14f'), // wholly free segment: empty_cache would give it back
  hex('#b07aa1'), // pending free
  hex('#808080', 0.7), // segment band: outline and separators between blocks
  hex('#ffffff', 0.5), // oversize hatching, over the state colour
];

export const HATCH_COLOR = BAND_COLOR + 1;

/** How much of its colour a block a selection leaves unmarked keeps, mixed into grey (the shader's `dim`). */
export const DIMMED_ALPHA = 0.22;
export const DIM_GREY = 0.55;

/** A palette entry as an unmarked block shows it (Canvas 2D and SVG; the shader mixes the same, with
 * DIM_GREY as segment-map.wgsl's own). */
function dimmedCss(p: PaletteEntry): string {
  const [r, g, b, a] = p.rgba.map((v, i) => (i < 3 ? DIM_GREY + (v - DIM_GREY) * DIMMED_ALPHA : v)) as [number, number, number, number];
  const c = (v: number): number => Math.round(v * 255);
  return `rgb(${c(r)} ${c(g)} ${c(b)} / ${a})`;
}

/** DIMMED_CSS[k]: PALETTE[k] dimmed, made once (the 2D map paints with it every frame). */
export const DIMMED_CSS: readonly string[] = PALETTE.map(dimmedCss);
