// The timeline's series are painted on a canvas (views/paint-paths.ts): how many of its pixels are
// mostly opaque and near the colour `.tl-allocated` is stroked with now (the line is anti-aliased and
// drawn over the reserved area's tint), and which colour that is.
import type { Page } from 'playwright-core';

export const allocatedColour = (page: Page): Promise<string> => page.evaluate(`getComputedStyle(document.querySelector('.tl-allocated')).stroke`);

export const pixelsOfColour = (page: Page, colour: string): Promise<number> =>
  page.evaluate(`(() => {
    const [r, g, b] = ${JSON.stringify(colour)}.match(/\\d+/g).map(Number);
    const c = document.querySelector('.tl-series');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    const near = (i) => Math.abs(d[i] - r) <= 24 && Math.abs(d[i + 1] - g) <= 24 && Math.abs(d[i + 2] - b) <= 24;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] >= 160 && near(i)) n++;
    return n;
  })()`);
