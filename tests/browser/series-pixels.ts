// The timeline's series are painted on a canvas (views/paint-paths.ts): how many of its pixels are
// opaque in the colour `.tl-allocated` is stroked with now, and which colour that is.
import type { Page } from 'playwright-core';

export const allocatedColour = (page: Page): Promise<string> => page.evaluate(`getComputedStyle(document.querySelector('.tl-allocated')).stroke`);

export const pixelsOfColour = (page: Page, colour: string): Promise<number> =>
  page.evaluate(`(() => {
    const [r, g, b] = ${JSON.stringify(colour)}.match(/\\d+/g).map(Number);
    const c = document.querySelector('.tl-series');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] === r && d[i + 1] === g && d[i + 2] === b && d[i + 3] === 255) n++;
    return n;
  })()`);
