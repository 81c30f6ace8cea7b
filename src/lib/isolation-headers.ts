// The headers that make a page cross-origin isolated, where SharedArrayBuffer exists: the servers of
// the page (Vite's, and `splitscope open`'s) send them with every response, so that the page and its
// workers share one copy of a request stream (worker/shared-stream.ts). The page loads nothing from
// other origins, so requiring CORP of them costs nothing.
export const ISOLATION_HEADERS: Readonly<Record<string, string>> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
