// The segment map's three painters (the WGSL shader, Canvas 2D, the SVG export) draw a hatched
// oversize block that a selection leaves unmarked alike, as the shader does: the hatch stripes mixed
// into the block's colour, then the whole dimmed towards grey. Canvas 2D and SVG lay the dimmed hatch
// colour (at the hatch's alpha) over the dimmed block colour, which is the same colour.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { DIM_GREY, DIMMED_ALPHA, DIMMED_CSS, HATCH_COLOR, PALETTE } from '../../src/gpu/segment-map/segment-map-palette';

const rgb = (css: string): number[] => css.match(/[\d.]+/g)!.slice(0, 3).map((v) => Number(v) / 255);

test('the shader and the palette dim towards the same grey', () => {
  const shader = readFileSync('shaders/segment-map.wgsl', 'utf8');
  expect(shader).toMatch(new RegExp(`const DIM_GREY = vec3f\\(${DIM_GREY}, ${DIM_GREY}, ${DIM_GREY}\\)`));
});

test("a dimmed hatched block: the dimmed hatch over the dimmed colour is the shader's colour, to a 255th", () => {
  const hatch = PALETTE[HATCH_COLOR]!.rgba;
  const a = hatch[3];
  for (let state = 0; state < 4; state++) {
    const c = PALETTE[state]!.rgba;
    // The shader: mix(grey, mix(c, h, a), dim).
    const shader = [0, 1, 2].map((k) => DIM_GREY + DIMMED_ALPHA * (c[k]! * (1 - a) + hatch[k]! * a - DIM_GREY));
    // Canvas 2D and SVG: the dimmed colour, then the dimmed hatch at alpha a over it.
    const base = rgb(DIMMED_CSS[state]!);
    const over = rgb(DIMMED_CSS[HATCH_COLOR]!);
    const painted = [0, 1, 2].map((k) => base[k]! * (1 - a) + over[k]! * a);
    for (let k = 0; k < 3; k++) expect(Math.abs(painted[k]! - shader[k]!)).toBeLessThan(1.5 / 255);
  }
});
