// A stack frame's label ("name file:line") made short enough for a bar or a table cell: the function
// name and the file from its package on (site-packages/ and dist-packages/ prefixes dropped, else the
// last three path parts). The full label stays in the tooltip.
const PACKAGES = /^.*\/(?:site|dist)-packages\//;

export function shortFrame(label: string): string {
  const space = label.indexOf(' ');
  if (space < 0 || label.startsWith('(')) return label;
  const name = label.slice(0, space);
  const where = label.slice(space + 1);
  const short = PACKAGES.test(where) ? where.replace(PACKAGES, '') : where.split('/').slice(-3).join('/');
  return `${name}  ${short}`;
}
