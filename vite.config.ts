import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { ISOLATION_HEADERS } from './src/lib/isolation-headers.ts';

export default defineConfig({
  plugins: [react()],
  // Cross-origin isolated: the request stream is shared with the page and the sweep workers, not copied.
  server: { headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
  build: { target: 'es2022', sourcemap: true },
  worker: { format: 'es' },
  test: {
    // Node-side suites; the browser suite has its own runner (scripts/test.mjs).
    include: ['tests/unit/**/*.test.ts', 'tests/conformance/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    pool: 'forks',
  },
});
