// splitscope open: the built page (dist/) served on loopback, with one snapshot beside it that the page
// opens at once (state/launch-file.ts). Nothing is uploaded: the browser reads the file from this
// machine's own server, which serves nothing but the page and that file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
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
  const server = createServer(handle);
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
