// An on-screen SVG as a file that looks the same anywhere: computed styles copied inline (the page's
// stylesheet and CSS variables do not travel), and the same picture rasterized for PNG.

const STYLE_PROPS = [
  'fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-dasharray', 'opacity',
  'font-family', 'font-size', 'font-weight', 'text-anchor', 'dominant-baseline', 'visibility', 'display',
];

export function standaloneSvg(svg: SVGSVGElement): string {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  const from = [svg, ...svg.querySelectorAll('*')];
  const to = [clone, ...clone.querySelectorAll('*')];
  from.forEach((el, i) => {
    const style = getComputedStyle(el);
    // A path the page paints on a canvas instead (data-canvas: see paint-paths.ts) is the picture here.
    const value = (p: string): string => (p === 'visibility' && el.hasAttribute('data-canvas') ? 'visible' : style.getPropertyValue(p));
    (to[i] as SVGElement).setAttribute('style', STYLE_PROPS.map((p) => `${p}:${value(p)}`).join(';'));
    to[i]!.removeAttribute('data-canvas');
  });
  const { width, height } = svg.getBoundingClientRect();
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('width', String(Math.round(width)));
  clone.setAttribute('height', String(Math.round(height)));
  // A background, so that the picture reads in a viewer of either theme.
  const bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  bg.setAttribute('width', '100%');
  bg.setAttribute('height', '100%');
  bg.setAttribute('fill', getComputedStyle(document.body).backgroundColor);
  clone.insertBefore(bg, clone.firstChild);
  return new XMLSerializer().serializeToString(clone);
}

export async function svgToPng(svgText: string, scale = 2): Promise<Blob> {
  const image = new Image();
  image.src = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width * scale;
  canvas.height = image.height * scale;
  const ctx = canvas.getContext('2d')!;
  ctx.scale(scale, scale);
  ctx.drawImage(image, 0, 0);
  URL.revokeObjectURL(image.src);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'));
}

export function download(name: string, data: Blob): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(data);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
