// Marks and measures the benchmarks read from the page (bench/*.bench.ts). The User Timing buffer has
// no limit and the page draws up to 60 frames a second, so each name keeps at most LIMIT entries:
// past that its entries are cleared and it starts again.
const LIMIT = 500;
const counts = new Map<string, number>();

function room(name: string, clear: (name: string) => void): void {
  const n = (counts.get(name) ?? 0) + 1;
  if (n > LIMIT) clear(name);
  counts.set(name, n > LIMIT ? 1 : n);
}

export function mark(name: string): void {
  room(name, (n) => performance.clearMarks(n));
  performance.mark(name);
}

/** A measure from `start` (a performance.now() time) to now. */
export function measure(name: string, start: number): void {
  room(name, (n) => performance.clearMeasures(n));
  performance.measure(name, { start });
}

/** Clears every mark and measure (a new file's open starts the benchmarks' clock again). */
export function clearTimings(): void {
  performance.clearMarks();
  performance.clearMeasures();
  counts.clear();
}
