// Which request a key moves the cursor to: arrows step one (Shift: 1% of the requests), Home/End jump.

export function keyTarget(key: string, shift: boolean, cursor: number, total: number): number | null {
  if (total <= 0) return null;
  const big = Math.max(1, Math.round(total / 100));
  const last = total - 1;
  const clamp = (i: number) => Math.min(last, Math.max(0, i));
  switch (key) {
    case 'ArrowLeft':
      return clamp(cursor - (shift ? big : 1));
    case 'ArrowRight':
      return clamp(cursor + (shift ? big : 1));
    case 'PageDown':
      return clamp(cursor - big);
    case 'PageUp':
      return clamp(cursor + big);
    case 'Home':
      return 0;
    case 'End':
      return last;
    default:
      return null;
  }
}

/** True when keys belong to the focused element (a field, a select, a slider such as max_split). */
export function keysTakenBy(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName.toLowerCase();
  return tag === 'input' || tag === 'textarea' || tag === 'select' || el.getAttribute('role') === 'slider' || (el as HTMLElement).isContentEditable === true;
}
