/** Strings in code-point order: the same on every machine (localeCompare follows the locale, and its
 * first call loads ICU's collation data). */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
