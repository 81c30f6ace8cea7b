// The share link: the view's state, versioned and validated (zod), as deflate + base64url in the
// URL hash (as Excalidraw does). Decoding never trusts the link: its length, the inflated size and
// every field are checked, and anything wrong becomes a LinkError that names the problem.
import { deflateSync, Inflate, strFromU8, strToU8 } from 'fflate';
import { z } from 'zod';
import { concatBytes } from '../lib/concat-bytes';
import { LinkError } from './link-error';

export const LINK_VERSION = 1;
/** A link longer than this is refused before decoding (an embedded snapshot stays well below it). */
export const MAX_LINK_CHARS = 1_000_000;
/** Inflated JSON above this is a decompression bomb, not a view. */
const MAX_INFLATED_BYTES = 2_000_000;
/** A snapshot file is embedded in the link only up to this size; larger ones travel by name and hash. */
export const MAX_EMBEDDED_FILE_BYTES = 256 * 1024;
const PREFIX = '#v1=';

const finite = z.number().finite();
const sourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('workload'), id: z.string().max(64), params: z.record(z.string().max(64), finite) }),
  z.object({ kind: z.literal('sample') }),
  z.object({
    kind: z.literal('file'),
    name: z.string().max(512),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** The file itself, base64, when it was small enough to embed. */
    data: z.string().max(Math.ceil((MAX_EMBEDDED_FILE_BYTES * 4) / 3) + 4).optional(),
  }),
]);

export const linkStateSchema = z.object({
  v: z.literal(LINK_VERSION),
  source: sourceSchema,
  /** A whole PYTORCH_CUDA_ALLOC_CONF string; null: the source's own (recorded, or defaults). */
  conf: z.string().max(2000).nullable(),
  capacityBytes: z.number().int().positive().max(2 ** 53).nullable(),
  /** 0-based request index; null: the last request. */
  cursor: z.number().int().nonnegative().nullable(),
  /** The device replayed, in a snapshot of several GPUs (absent: 0). */
  device: z.number().int().nonnegative().max(1023).optional(),
  /** Calls inserted into the run, by request index: torch.cuda.empty_cache() ... */
  emptyCacheAfter: z.array(z.number().int().nonnegative()).max(10_000).optional(),
  /** ... and torch.cuda.reset_peak_memory_stats(). */
  resetPeakAfter: z.array(z.number().int().nonnegative()).max(10_000).optional(),
  /** The segment map's zoom: d3's scale and x translation as a fraction of the map's width. */
  zoom: z.object({ k: z.number().finite().min(1).max(1e12), x: z.number().finite().min(-1e12).max(1) }).optional(),
  /** The allocation (request id) pinned on the segment map. */
  pinned: z.number().int().nonnegative().optional(),
  /** Panels open, when not the default (the tuning guide alone). */
  panels: z.array(z.enum(['guide', 'export', 'ooms', 'explorer'])).max(4).optional(),
  /** Configs compared side by side (the comparison is open). */
  compare: z.array(z.string().max(2000)).min(2).max(4).optional(),
});

export type LinkState = z.infer<typeof linkStateSchema>;
export type LinkSource = LinkState['source'];

export function encodeLink(state: LinkState): string {
  return PREFIX + toBase64Url(deflateSync(strToU8(JSON.stringify(state)), { level: 9 }));
}

/** The state in a URL hash; null when the hash holds no link; throws LinkError when it is broken. */
export function decodeLink(hash: string): LinkState | null {
  if (hash === '' || hash === '#') return null;
  if (!hash.startsWith('#v')) return null;
  if (hash.length > MAX_LINK_CHARS) {
    throw new LinkError(`This link is ${hash.length.toLocaleString('en-US')} characters long, more than a splitscope link can be (${MAX_LINK_CHARS.toLocaleString('en-US')}): it was not opened.`);
  }
  if (!hash.startsWith(PREFIX)) throw new LinkError('This link was made by another version of splitscope (it does not start with #v1=): it could not be read.');
  let bytes: Uint8Array;
  try {
    bytes = fromBase64Url(hash.slice(PREFIX.length));
  } catch {
    throw new LinkError('This link is damaged (its data is not base64url): was it cut short or edited?');
  }
  let json: unknown;
  try {
    json = JSON.parse(strFromU8(inflateLimited(bytes, MAX_INFLATED_BYTES)));
  } catch (e) {
    if (e instanceof LinkError) throw e;
    throw new LinkError('This link is damaged (its data does not decompress to a view): was it cut short or edited?');
  }
  const parsed = linkStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new LinkError(`This link holds a view splitscope cannot show (${issue.path.join('.') || 'the view'}: ${issue.message}).`);
  }
  return parsed.data;
}

function inflateLimited(data: Uint8Array, limit: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let done = false;
  const inflate = new Inflate((chunk, final) => {
    total += chunk.length;
    if (total > limit) throw new LinkError(`This link inflates to more than ${limit.toLocaleString('en-US')} bytes (a decompression bomb?): it was not opened.`);
    chunks.push(chunk);
    done = final;
  });
  inflate.push(data, true);
  if (!done) throw new Error('truncated');
  return concatBytes(chunks, total);
}

export function toBase64Url(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('not base64url');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
