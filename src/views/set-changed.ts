// Attribute writes that skip an unchanged value. Blink repaints an SVG element on every write of an
// attribute or of textContent, equal value or not (measured: a path's same `d` each frame swapped a
// frame each time), and a slider step often rewrites the same axis, labels and markers: in a window
// composited on SwiftShader each repainted area costs the CPU ~20 ms per million pixels.

/** Sets `name` to `value` (null removes it) unless it already is; true when it changed. */
export function setChanged(el: Element | null, name: string, value: string | number | null): boolean {
  if (!el) return false;
  const next = value === null ? null : String(value);
  if (el.getAttribute(name) === next) return false;
  if (next === null) el.removeAttribute(name);
  else el.setAttribute(name, next);
  return true;
}
