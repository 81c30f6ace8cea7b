// The share link's bytes: its state (link-schema.ts) as JSON, deflated, base64url, behind a versioned
// prefix in the URL hash (as Excalidraw's data/encode.ts). Decoding never trusts the link: its length,
// the inflated size and every field are checked, and anything wrong becomes a LinkError that names
// the problem.
import { deflateSync, Inflate, strFromU8, strToU8 } from 'fflate';
import { concatBytes } from '../lib/concat-bytes';
import { LinkError } from './link-error';
import { LINK_VERSION, LINK_VERSIONS, type LinkState } from './link-schema';

/** A link longer than this is refused before decoding (an embedded snapshot stays well below it). */
export const MAX_LINK_CHARS = 1_000_000;
/** Inflated JSON above this is a decompression bomb, not a view. */
const MAX_INFLATED_BYTES = 2_000_000;

export function encodeLink(state: LinkState): string {
  return `#v${LINK_VERSION}=` + toBase64Url(deflateSync(strToU8(JSON.stringify(state)), { level: 9 }));
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
