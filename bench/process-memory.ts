// Resident memory of Chromium's processes, by type, from /proc (Linux): the renderer holds the page
// and its workers (dedicated workers are threads of the page's renderer), the GPU process SwiftShader.
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';

interface ProcessInfo {
  type: string;
  id: number;
}

function rssMB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status);
    return kb ? Number(kb[1]) / 1024 : 0;
  } catch {
    return 0; // the process ended meanwhile
  }
}

/**
 * MB resident: the page's renderer (the largest renderer: Chromium keeps spare ones of a few tens
 * of MB beside it) and the GPU process.
 */
export async function chromiumRss(browser: Browser): Promise<{ renderer: number; gpu: number }> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: ProcessInfo[] };
    const of = (type: string): number[] => processInfo.filter((p) => p.type === type).map((p) => rssMB(p.id));
    return { renderer: Math.max(0, ...of('renderer')), gpu: of('GPU').reduce((a, b) => a + b, 0) };
  } finally {
    await cdp.detach();
  }
}
