type Typed = Uint8Array | Int32Array | Float64Array;

/** A copy of `a` in a typed array of length `n` (columns of events and requests grow by doubling). */
export function growTyped<T extends Typed>(a: T, n: number): T {
  const b = new (a.constructor as new (length: number) => T)(n);
  b.set(a);
  return b;
}
