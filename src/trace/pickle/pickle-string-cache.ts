// Short strings of a pickle, decoded once and shared (see StringCache).

const utf8 = new TextDecoder('utf-8');

/** Key strings decode to these literals, so comparing them is a pointer test. */
const KNOWN_STRINGS = new Map<string, string>(
  [
    'action', 'addr', 'size', 'stream', 'time_us', 'compile_context', 'user_metadata', 'frames',
    'device_free', 'name', 'filename', 'line', 'address', 'requested_size', 'state', 'device',
    'total_size', 'allocated_size', 'active_size', 'segment_type', 'segment_pool_id',
    'is_expandable', 'blocks', 'alloc', 'free_requested', 'free_completed', 'segment_alloc',
    'segment_free', 'segment_map', 'segment_unmap', 'oom', 'snapshot', 'active_allocated',
    'active_pending_free', 'inactive', 'large', 'small', 'segments', 'device_traces',
    'allocator_settings', 'external_annotations', 'N/A', '',
  ].map((k) => [k, k]),
);

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
  private readonly view: DataView;

  constructor(private readonly b: Uint8Array) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
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
    s = KNOWN_STRINGS.get(s) ?? s;
    this.strs[slot] = s;
    this.offs[slot] = p;
    this.lens[slot] = len;
    return s;
  }
}
