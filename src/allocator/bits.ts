const TWO_32 = 2 ** 32;

/** floor(log2(n)) for an integer 1 <= n < 2^53, exact (Math.log2 can round up near powers of two). */
export function floorLog2(n: number): number {
  if (n < TWO_32) return 31 - Math.clz32(n);
  return 63 - Math.clz32(Math.floor(n / TWO_32));
}

export function isPowerOf2(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && 2 ** floorLog2(n) === n;
}
