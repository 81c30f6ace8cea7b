// The MCP server's input, one JSON-RPC message a line, checked before the SDK's stdio transport sees it.
// The transport keeps at most STDIO_DEFAULT_MAX_BUFFER_SIZE (10 MiB) of a line; past that it closes, and
// the server used to end silently with exit 0. Here a line longer than the limit is dropped as it
// streams in (never held whole) and answered with a JSON-RPC error, "Invalid Request" (-32600), under
// the request's id where its first or last bytes show it, else id null; a line that is not JSON is
// answered "Parse error" (-32700, id null). Either way the server goes on reading the next line.
import { PassThrough, type Readable } from 'node:stream';
import { formatSize } from '../allocator/format-size';

/** The longest message read: the SDK's own limit (STDIO_DEFAULT_MAX_BUFFER_SIZE in shared/stdio.js). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** A JSON-RPC error response, as written on stdout. */
export interface RpcError {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

/** How much of an overlong line's start and end is kept, to find its id. */
const KEEP = 512;

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"jsonrpc":"2.0","id":7,` or `{"id":7,` at a message's start ... */
const HEAD_ID = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}\s*[,}]`);
/** ... or `,"id":7}` closing it (the SDK writes the id last). */
const TAIL_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID}\s*\}\s*$`);

/** The id of a message seen only by its start and end; null where neither shows one. */
export function idOf(head: string, tail: string): string | number | null {
  const m = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail);
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return null;
  }
}

/**
 * `input`'s lines that fit `limit` and parse as JSON, each written to the stream returned (newline
 * ended) for the SDK's transport; every other line is answered through `answer`.
 */
export function messageLines(input: Readable, answer: (error: RpcError) => void, limit = MAX_MESSAGE_BYTES): PassThrough {
  const out = new PassThrough();
  let parts: Buffer[] = [];
  let size = 0;
  // An overlong line so far: its first bytes, its last, how many.
  let over: { head: Buffer; tail: Buffer; bytes: number } | null = null;

  const take = (piece: Buffer): void => {
    if (piece.length === 0) return;
    if (over) {
      over.bytes += piece.length;
      over.tail = Buffer.concat([over.tail, piece.subarray(-KEEP)]).subarray(-KEEP);
      return;
    }
    if (size + piece.length <= limit) {
      parts.push(piece);
      size += piece.length;
      return;
    }
    const all = Buffer.concat([...parts, piece.subarray(0, KEEP)]);
    over = { head: Buffer.from(all.subarray(0, KEEP)), tail: Buffer.from(piece.subarray(-KEEP)), bytes: size + piece.length };
    parts = [];
    size = 0;
  };

  const endLine = (): void => {
    if (over) {
      const { head, tail, bytes } = over;
      over = null;
      answer({
        jsonrpc: '2.0',
        id: idOf(head.toString('utf8'), tail.toString('utf8')),
        error: {
          code: -32600,
          message: `a message of ${bytes} bytes (${formatSize(bytes)}) is over this server's limit of ${limit} bytes (${formatSize(limit)}) and was not read; the server goes on`,
        },
      });
      return;
    }
    const line = Buffer.concat(parts);
    parts = [];
    size = 0;
    const text = line.toString('utf8');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      answer({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: a line that is not JSON (${(e as Error).message})` } });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      answer({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: a JSON-RPC message is one JSON object, not ${Array.isArray(value) ? 'an array' : String(value === null ? 'null' : typeof value)}` } });
      return;
    }
    out.write(Buffer.concat([line, Buffer.from('\n')]));
  };

  input.on('data', (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(10, start);
      take(bytes.subarray(start, nl === -1 ? bytes.length : nl));
      if (nl === -1) break;
      endLine();
      start = nl + 1;
    }
  });
  // A last line without its newline is not a message (as the SDK reads it).
  input.on('end', () => out.end());
  input.on('error', (e) => out.destroy(e));
  return out;
}
