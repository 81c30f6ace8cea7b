// The share link's bytes: its state (link-schema.ts) as JSON, deflated, base64url, behind a versioned
// prefix in the URL hash (as Excalidraw's data/encode.ts). Decoding never trusts the link: its length,
// the inflated size and every field are checked, and anything wrong becomes a LinkError that names
// the problem.
import { Deflate, deflateSync, Inflate, strFromU8, strToU8 } from 'fflate';
import { concatBytes } from '../lib/concat-bytes';
import { LinkError } from './link-error';
import { LINK_VERSION, LINK_VERSIONS, type LinkState } from './link-schema';

/** A link longer than this is refused before decoding (an embedded snapshot stays well below it). */
export const MAX_LINK_CHARS = 1_000_000;
/** Inflated JSON above this is a decompression bomb, not a view. */
const MAX_INFLATED_BYTES = 2_000_000;

/** An embedded file's data below this is deflated with the rest each time. */
const CACHED_DATA_CHARS = 16 * 1024;

/**
 * The JSON up to the end of an embedded file's data, deflated and sync-flushed (a byte-aligned,
 * non-final block), and the base64url of its whole 3-byte groups. The URL is rewritten after every
 * config change and cursor rest; deflating and encoding a 256 KiB file each time took ~30 ms of
 * the page's thread, now only the few hundred bytes after it are.
 */
let cachedHead: { text: string; bytes: Uint8Array; base64: string; groupBytes: number } | null = null;

export function encodeLink(state: LinkState): string {
  const json = JSON.stringify(state);
  const data = state.source.kind === 'file' ? (state.source.data ?? '') : '';
  const at = data.length >= CACHED_DATA_CHARS ? json.indexOf(data) : -1;
  if (at < 0) return `#v${LINK_VERSION}=` + toBase64Url(deflateSync(strToU8(json), { level: 9 }));
  const end = at + data.length;
  const head = json.slice(0, end);
  if (cachedHead?.text !== head) cachedHead = deflateHead(head);
  if (!cachedHead) return `#v${LINK_VERSION}=` + toBase64Url(deflateSync(strToU8(json), { level: 9 }));
  // A raw deflate stream is a run of blocks: the tail's own stream, final block last, may follow the head's.
  const tail = deflateSync(strToU8(json.slice(end)), { level: 9 });
  const rest = new Uint8Array(cachedHead.bytes.length - cachedHead.groupBytes + tail.length);
  rest.set(cachedHead.bytes.subarray(cachedHead.groupBytes));
  rest.set(tail, cachedHead.bytes.length - cachedHead.groupBytes);
  return `#v${LINK_VERSION}=` + cachedHead.base64 + toBase64Url(rest);
}

function deflateHead(text: string): NonNullable<typeof cachedHead> | null {
  const chunks: Uint8Array[] = [];
  const deflate = new Deflate({ level: 9 }, (chunk) => chunks.push(chunk));
  const input = strToU8(text);
  deflate.push(input);
  deflate.flush(true);
  // fflate 0.8.3's sync flush writes the partial last byte right but the empty stored block after it
  // at a wrong offset (it passes the bit state as a position). Write that block here: after the
  // partial byte, LEN 0 and NLEN 0xffff, with one more zero byte when the block's 3 header bits did
  // not fit in the partial byte. Which one is right is checked by inflating.
  const partial = chunks.pop()![0]!;
  const body = concatBytes(chunks, chunks.reduce((n, c) => n + c.length, 0));
  for (const trailer of [[partial, 0, 0, 0xff, 0xff], [partial, 0, 0, 0, 0xff, 0xff]]) {
    const bytes = concatBytes([body, Uint8Array.from(trailer)], body.length + trailer.length);
    if (!inflatesTo(bytes, input)) continue;
    const groupBytes = bytes.length - (bytes.length % 3);
    return { text, bytes, base64: toBase64Url(bytes.subarray(0, groupBytes)), groupBytes };
  }
  return null;
}

/** Whether `head` (a non-final deflate run) followed by an empty final block inflates to `expected`. */
function inflatesTo(head: Uint8Array, expected: Uint8Array): boolean {
  try {
    const out = inflateLimited(concatBytes([head, Uint8Array.of(1, 0, 0, 0xff, 0xff)], head.length + 5), expected.length);
    return out.length === expected.length && out.every((b, i) => b === expected[i]);
  } catch {
    return false;
  }
}

/** The state in a URL hash; null when the hash holds no link; throws LinkError when it is broken. */
export function decodeLink(hash: string): LinkState | null {
  if (hash === '' || hash === '#') return null;
  if (!hash.startsWith('#v')) return null;
  if (hash.length > MAX_LINK_CHARS) {
    throw new LinkError(`This link is ${hash.length.toLocaleString('en-US')} characters long, more than a splitscope link can be (${MAX_LINK_CHARS.toLocaleString('en-US')}): it was not opened.`);
  }
  const prefix = /^#v(\d{1,4})=/.exec(hash);
  const version = prefix ? LINK_VERSIONS.get(Number(prefix[1])) : undefined;
  if (!prefix || !version) {
    throw new LinkError(`This link was made by another version of splitscope (it does not start with #v${LINK_VERSION}=): it could not be read.`);
  }
  let bytes: Uint8Array;
  try {
    bytes = fromBase64Url(hash.slice(prefix[0].length));
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
  const parsed = version.schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new LinkError(`This link holds a view splitscope cannot show (${issue.path.join('.') || 'the view'}: ${issue.message}).`);
  }
  return version.migrate(parsed.data);
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
