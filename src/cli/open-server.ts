// splitscope open: the built page (dist/) served on loopback, with one snapshot beside it that the page
// opens at once (state/launch-file.ts). Nothing is uploaded: the browser reads the file from this
// machine's own server, which serves nothing but the page and that file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { ISOLATION_HEADERS } from '../lib/isolation-headers';
import { OPEN_PATH } from '../lib/launch-names';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.gz': 'application/gzip',
  '.wasm': 'application/wasm',
};


/** An address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

/** The names a request's Host header may carry: those this server is reached by. Any other (a page
 * elsewhere whose name was rebound to this address, DNS rebinding) is refused, so that it cannot read
 * the launched file. */
function servedNames(host: string): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '::1', host.toLowerCase()]);
  if (!isLoopback(host)) {
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase());
  }
  return names;
}

/** The name part of a Host header ("[::1]:5173" -> "::1"). */
const hostName = (header: string): string => {
  const h = header.trim().toLowerCase();
  return h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.replace(/:\d*$/, '');
};

export interface OpenServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `dist` and the snapshot `name` (its `bytes`) on host:port (0: any free port). */
export function serveOpen(dist: string, name: string, bytes: Uint8Array, host: string, port: number): Promise<OpenServer> {
  if (!existsSync(join(dist, 'index.html'))) {
    return Promise.reject(new Error(`the page is not built (no ${join(dist, 'index.html')}): run \`npm run build\` first`));
  }
  const root = normalize(dist + sep);
  const names = servedNames(host);
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (!names.has(hostName(req.headers.host ?? ''))) return void res.writeHead(421, { 'content-type': 'text/plain' }).end('not served under this name');
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request: the path is not a valid URL encoding');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405).end();
    for (const [header, value] of Object.entries(ISOLATION_HEADERS)) res.setHeader(header, value);
    if (path === `/${OPEN_PATH}${name}`) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length, 'cache-control': 'no-store' });
      return void res.end(req.method === 'HEAD' ? undefined : bytes);
    }
    const file = normalize(join(root, path === '/' ? 'index.html' : path));
    if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(req.method === 'HEAD' ? undefined : readFileSync(file));
  };
  const server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch {
      // One request never stops the server: it answers and serves the next.
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('server error');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      const actual = typeof address === 'object' && address ? address.port : port;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${actual}/?open=${encodeURIComponent(name)}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
