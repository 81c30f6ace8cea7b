// Python ints in a pickle: exact as a number up to 2^53 - 1, a bigint beyond.

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export function normalizeBig(b: bigint): number | bigint {
  return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b;
}

/** Little-endian two's-complement integer of `len` bytes (LONG1/LONG4 payload). */
export function decodeLong(b: Uint8Array, p: number, len: number): number | bigint {
  if (len <= 6) {
    if (len === 0) return 0;
    let v = 0;
    let mul = 1;
    for (let i = 0; i < len; i++) {
      v += b[p + i]! * mul;
      mul *= 256;
    }
    return b[p + len - 1]! & 0x80 ? v - mul : v;
  }
  if (len <= 8) {
    const lo = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
    let hi = 0;
    let mul = 1;
    for (let i = 4; i < len; i++) {
      hi += b[p + i]! * mul;
      mul *= 256;
    }
    if (b[p + len - 1]! & 0x80) hi -= mul;
    // hi * 2^32 is exact; the sum is exact whenever the true value is within 2^53, and any
    // true value beyond rounds to at least 2^53, so the range test is sound.
    const v = hi * 4294967296 + lo;
    if (v <= MAX_SAFE && v >= -MAX_SAFE) return v;
    return (BigInt(hi) << 32n) + BigInt(lo);
  }
  let hex = '';
  for (let i = len - 1; i >= 0; i--) hex += (b[p + i]! < 16 ? '0' : '') + b[p + i]!.toString(16);
  let v = BigInt('0x' + hex);
  if (b[p + len - 1]! & 0x80) v -= 1n << BigInt(len * 8);
  return normalizeBig(v);
}
