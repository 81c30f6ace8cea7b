/**
 * An integer with commas between thousands ("32,661"), as toLocaleString('en-US') writes it: that
 * first call loads ICU's locale data, ~20 ms of a CLI run that needs only the commas.
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${digits}` : digits;
}
