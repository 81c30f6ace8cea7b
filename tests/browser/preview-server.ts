// Serves the built page (dist/) for the browser tests on a free loopback port.
import type { TestProject } from 'vitest/node';
import { preview } from 'vite';

export default async function setup(project: TestProject) {
  const server = await preview({ preview: { host: '127.0.0.1', port: 0, strictPort: false }, logLevel: 'warn' });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error('vite preview did not report a URL');
  project.provide('baseUrl', url);
  return async () => {
    await server.close();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
  }
}
