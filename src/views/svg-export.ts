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

export interface LegendEntry {
  label: string;
  /** A CSS colour: the entry's swatch ... */
  color: string;
  /** ... or, for a marker, the glyph drawn in it. */
  mark?: string;
  /** Striped, as the map hatches an oversize block. */
  hatched?: boolean;
}

/** A legend read from an on-screen list: each item's text and the colour of its swatch or mark. */
export function legendOf(list: Element | null): LegendEntry[] {
  if (!list) return [];
  return [...list.querySelectorAll(':scope > li')].map((li) => {
    const swatch = li.querySelector('.tl-swatch, .swatch');
    const mark = li.querySelector('.tl-mark');
    const color = swatch ? getComputedStyle(swatch).backgroundColor : mark ? getComputedStyle(mark).color : getComputedStyle(li).color;
    // The words without the mark's glyph, which is drawn apart.
    const label = [...li.childNodes].map((n) => (n === mark ? '' : (n.textContent ?? ''))).join('').replace(/\s+/g, ' ').trim();
    if (mark) return { label, color, mark: mark.textContent ?? '' };
    return swatch?.classList.contains('oversize') ? { label, color, hatched: true } : { label, color };
  });
}

const LINE = 16;
const CHAR = 7.2; // px a character of the 12 px caption and legend font takes, about: where their rows wrap

/** A caption line cut at its " · " into rows no wider than `width`. */
function wrapped(line: string, width: number, charPx: number): string[] {
  const rows: string[] = [];
  for (const part of line.split(' · ')) {
    const last = rows.length - 1;
    if (last >= 0 && (rows[last]!.length + 3 + part.length) * charPx <= width) rows[last] += ` · ${part}`;
    else rows.push(part);
  }
  return rows;
}

/** A standalone SVG (standaloneSvg's) with a caption above it (a title and its lines) and a legend
 * below: the picture says what it is, under what settings, and what its colours mean. */
export function framedSvg(picture: string, caption: readonly string[], legend: readonly LegendEntry[]): string {
  const doc = new DOMParser().parseFromString(picture, 'image/svg+xml');
  const inner = doc.documentElement;
  const width = Number(inner.getAttribute('width'));
  const height = Number(inner.getAttribute('height'));
  const ink = getComputedStyle(document.body).color;
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  // The title in 14 px, the rest in 12 px rows that wrap at the picture's width.
  const rows = caption.flatMap((line, i) => (i === 0 ? [{ text: line, title: true }] : wrapped(line, width - 16, CHAR).map((text) => ({ text, title: false }))));
  const top = 8 + LINE * rows.length + 4;
  const texts = rows.map(({ text, title }, i) => `<text x="8" y="${8 + LINE * (i + 1) - 4}" font-size="${title ? 14 : 12}" font-weight="${title ? 600 : 400}" fill="${ink}">${esc(text)}</text>`);
  // The legend, in rows that wrap at the picture's width.
  const items: string[] = [];
  let x = 8;
  let y = top + height + 6;
  for (const e of legend) {
    const w = 18 + e.label.length * CHAR + 14;
    if (x > 8 && x + w > width) (x = 8), (y += LINE);
    items.push(
      e.mark
        ? `<text x="${x}" y="${y + 11}" font-size="12" fill="${e.color}">${esc(e.mark)}</text>`
        : `<rect x="${x}" y="${y + 2}" width="12" height="10" fill="${e.color}"/>` +
            (e.hatched ? `<path d="M${x},${y + 9} l5,-5 M${x + 3},${y + 12} l9,-9 M${x + 9},${y + 12} l3,-3" stroke="${ink}" stroke-opacity="0.5" stroke-width="1.5"/>` : ''),
      `<text x="${x + 18}" y="${y + 11}" font-size="12" fill="${ink}">${esc(e.label)}</text>`,
    );
    x += w;
  }
  const total = legend.length > 0 ? y + LINE + 4 : top + height + 4;
  inner.setAttribute('y', String(top));
  const body = new XMLSerializer().serializeToString(inner);
  const bg = getComputedStyle(document.body).backgroundColor;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" font-family="system-ui, sans-serif">` +
    `<rect width="100%" height="100%" fill="${bg}"/>${texts.join('')}${body}${items.join('')}</svg>`
  );
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
