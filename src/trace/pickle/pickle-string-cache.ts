// Short strings of a pickle, decoded once and shared (see StringCache).

const utf8 = new TextDecoder('utf-8');

// ---------------------------------------------------------------- string cache

const CACHE_BITS = 12;
const CACHE_MAX_LEN = 255;

/**
 * Decodes UTF-8 strings of up to 255 bytes through a small direct-mapped cache, so the
 * hundreds of thousands of copies of 'alloc' in a snapshot (torch writes a separate string
 * per entry) become one JS string: no decoding on a hit and far less heap. A hit is checked
 * byte for byte against the earlier occurrence in the input.
 */
export class StringCache {
  private readonly strs: (string | undefined)[] = new Array<string | undefined>(1 << CACHE_BITS).fill(undefined);
  private readonly offs = new Float64Array(1 << CACHE_BITS);
  private readonly lens = new Int32Array(1 << CACHE_BITS);
  private b: Uint8Array = new Uint8Array(0);
  private view: DataView = new DataView(new ArrayBuffer(0));
  /** Strings handed out as these very values (one string per dict key, wherever it was decoded). */
  private readonly interned: Map<string, string>;

  constructor(intern: readonly string[] = []) {
    this.interned = new Map(intern.map((s) => [s, s]));
  }

  /** Reads from `b` from now on (the reader's next window): what was cached pointed into the last one. */
  rebase(b: Uint8Array): void {
    this.b = b;
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.strs.fill(undefined);
  }

  get(p: number, len: number): string {
    const b = this.b;
    if (len > CACHE_MAX_LEN) return utf8.decode(b.subarray(p, p + len));
    const v = this.view;
    // Hash the length and the first and last four bytes only: a hit then costs two loads
    // and one comparison. Strings that collide just evict each other.
    let h: number;
    if (len >= 4) {
      h = Math.imul(v.getInt32(p, true), 0x9e3779b1) ^ Math.imul(v.getInt32(p + len - 4, true) ^ len, 0x85ebca6b);
    } else {
      h = len;
      for (let i = 0; i < len; i++) h = Math.imul(h ^ b[p + i]!, 0x01000193);
    }
    const slot = (h ^ (h >>> 16)) & ((1 << CACHE_BITS) - 1);
    const cached = this.strs[slot];
    if (cached !== undefined && this.lens[slot] === len) {
      const q = this.offs[slot]!;
      let i = 0;
      for (; i + 4 <= len; i += 4) if (v.getInt32(p + i, true) !== v.getInt32(q + i, true)) break;
      if (i + 4 > len) {
        while (i < len && b[p + i] === b[q + i]) i++;
        if (i === len) return cached;
      }
    }
    let high = 0;
    for (let i = p, e = p + len; i < e; i++) high |= b[i]!;
    let s: string;
    if (high < 0x80) {
      s = len === 0 ? '' : String.fromCharCode.apply(null, b.subarray(p, p + len) as unknown as number[]);
    } else {
      s = utf8.decode(b.subarray(p, p + len));
    }
    s = this.interned.get(s) ?? s;
    this.strs[slot] = s;
    this.offs[slot] = p;
    this.lens[slot] = len;
    return s;
  }
}
