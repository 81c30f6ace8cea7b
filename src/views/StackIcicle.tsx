// An icicle of the live memory by allocation stack: the program's entry on top, each frame a bar as
// wide as the bytes allocated under it (d3-hierarchy's partition). Clicking a frame zooms into it
// and selects it; its ancestors stay as full-width bars above, and clicking one zooms back out.
import { useWidth } from './use-width';
import { hierarchy, partition, type HierarchyRectangularNode } from 'd3';
import { useMemo, useRef, useState } from 'react';
import { formatSize } from '../allocator/format-size';
import type { StackTree } from '../trace/measures/memory-by-stack';
import { shortFrame } from './frame-text';

export interface StackIcicleProps {
  tree: StackTree;
  /** The node shown full width (its subtree below, its ancestors above), and selected; 0: nothing selected. */
  focus: number;
  onFocus(node: number): void;
}

const ROW = 20;
/** Narrower bars are not drawn (their bytes are still in their parent's). */
const MIN_PX = 0.5;

interface Datum {
  k: number;
  children: Datum[];
}

/** A hue per file, so that a file's frames read as one colour down the stack: warm for Python, cool for C++. */
function colorOf(label: string): string {
  const m = /\s(\S+?)(?::\d+| \(line unknown\))?$/.exec(label);
  const file = m?.[1] ?? label;
  let h = 0;
  for (let i = 0; i < file.length; i++) h = (h * 31 + file.charCodeAt(i)) >>> 0;
  const python = file.endsWith('.py');
  const hue = python ? 10 + (h % 50) : 190 + (h % 70);
  return `hsl(${hue} ${python ? 70 : 45}% ${58 + (h % 12)}%)`;
}

export function StackIcicle({ tree, focus, onFocus }: StackIcicleProps) {
  const boxRef = useRef<HTMLDivElement>(null);
  const width = useWidth(boxRef);
  const [hover, setHover] = useState<{ k: number; x: number; y: number } | null>(null);

  // The partition of the whole tree, in units of bytes across and depth down.
  const nodes = useMemo(() => {
    const build = (k: number): Datum => {
      const children: Datum[] = [];
      for (let c = k + 1; c < tree.end[k]!; c = tree.end[c]!) children.push(build(c));
      return { k, children };
    };
    const root = hierarchy<Datum>(build(0), (d) => d.children).sum((d) => {
      // Own bytes: the node's less its children's (an allocation made in this frame itself).
      let own = tree.bytes[d.k]!;
      for (const c of d.children) own -= tree.bytes[c.k]!;
      return Math.max(0, own);
    });
    const byNode: HierarchyRectangularNode<Datum>[] = [];
    partition<Datum>().size([1, 1])(root).each((n) => (byNode[n.data.k] = n));
    return byNode;
  }, [tree]);

  const f = nodes[focus] ?? nodes[0]!;
  const ancestors = f.ancestors().reverse(); // root .. focus
  const span = f.x1 - f.x0 || 1;
  const rowOf = (n: HierarchyRectangularNode<Datum>): number => n.depth;
  const visible = f.descendants().filter((n) => ((n.x1 - n.x0) / span) * width >= MIN_PX);
  const rows = visible.reduce((m, n) => Math.max(m, rowOf(n)), f.depth) + 1;
  const bars: { k: number; x: number; w: number; y: number; ancestor: boolean }[] = [
    ...ancestors.slice(0, -1).map((n) => ({ k: n.data.k, x: 0, w: width, y: rowOf(n) * ROW, ancestor: true })),
    ...visible.map((n) => ({ k: n.data.k, x: ((n.x0 - f.x0) / span) * width, w: ((n.x1 - n.x0) / span) * width, y: rowOf(n) * ROW, ancestor: false })),
  ];
  const total = tree.bytes[0]!;
  const h = hover && tree.label[hover.k] !== undefined ? hover : null;
  return (
    <div className="icicle" ref={boxRef} onPointerLeave={() => setHover(null)}>
      <svg width={width} height={rows * ROW} role="tree" aria-label="Live memory by allocation stack">
        {width > 0 &&
          bars.map((b) => {
            const label = tree.label[b.k]!;
            const selected = b.k === focus && focus !== 0;
            return (
              <g
                key={b.k}
                className={`icicle-bar${b.k === 0 ? ' root' : ''}${b.ancestor ? ' ancestor' : ''}${selected ? ' selected' : ''}`}
                transform={`translate(${b.x},${b.y})`}
                role="treeitem"
                aria-selected={selected}
                aria-label={`${label}: ${formatSize(tree.bytes[b.k]!)}`}
                data-node={b.k}
                onClick={() => {
                  // The bars move under the pointer as the view zooms: the tip said what was there before.
                  setHover(null);
                  onFocus(b.k === focus ? tree.parent[b.k]! : b.k);
                }}
                onPointerMove={(e) => setHover({ k: b.k, x: e.nativeEvent.offsetX, y: b.y })}
              >
                <rect width={Math.max(0, b.w - 1)} height={ROW - 1} fill={b.k === 0 ? 'var(--icicle-root)' : colorOf(label)} />
                {b.w > 36 && (
                  <text x={4} y={ROW - 6}>
                    {fit(shortFrame(label), b.w - 8)}
                  </text>
                )}
              </g>
            );
          })}
      </svg>
      {h && (
        <div className="icicle-tip" style={{ left: Math.min(h.x + 12, Math.max(0, width - 320)), top: h.y + ROW + 4 }} role="tooltip">
          <div className="icicle-tip-label">{tree.label[h.k]}</div>
          <div>
            {formatSize(tree.bytes[h.k]!)} in {tree.blocks[h.k]!.toLocaleString()} allocation{tree.blocks[h.k] === 1 ? '' : 's'} ·{' '}
            {total > 0 ? ((100 * tree.bytes[h.k]!) / total).toFixed(1) : '0'}% of live memory
          </div>
        </div>
      )}
    </div>
  );
}

/** The label cut to about `px` wide (7 px a character at 12 px), the function name kept first. */
function fit(label: string, px: number): string {
  const chars = Math.floor(px / 7);
  return label.length <= chars ? label : chars <= 1 ? '' : `${label.slice(0, chars - 1)}…`;
}
