// The median of a list of figures, in a file of its own so that the benchmarks bundled for a browser
// or for Dawn on the device (bench/gpu) can use it without harness.ts's Node imports.

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
