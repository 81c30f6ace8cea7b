// Resident memory of Chromium's processes, by type, from /proc (Linux): the renderer holds the page
// and its workers (dedicated workers are threads of the page's renderer), the GPU process SwiftShader.
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export interface ProcessInfo {
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

export async function processes(browser: Browser): Promise<ProcessInfo[]> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    return ((await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: ProcessInfo[] }).processInfo;
  } finally {
    await cdp.detach();
  }
}

/**
 * MB resident: the page's renderer (the largest renderer: Chromium keeps spare ones of a few tens
 * of MB beside it) and the GPU process.
 */
export async function chromiumRss(browser: Browser): Promise<{ renderer: number; gpu: number }> {
  const info = await processes(browser);
  const of = (type: string): number[] => info.filter((p) => p.type === type).map((p) => rssMB(p.id));
  return { renderer: Math.max(0, ...of('renderer')), gpu: of('GPU').reduce((a, b) => a + b, 0) };
}

/**
 * The renderers' resident memory (MB, the largest), sampled every 100 ms until stop() gives the
 * peak. The processes are listed once and then read from /proc alone: a CDP session and Chromium's
 * process list per sample took ~10 ms of the two cores each, 1.5 s of a 1 GB file's open.
 */
export async function sampleRenderer(browser: Browser): Promise<{ stop(): Promise<number> }> {
  const pids = (await processes(browser)).filter((p) => p.type === 'renderer').map((p) => p.id);
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, ...pids.map(rssMB))), 100);
  return {
    stop: async () => {
      clearInterval(timer);
      return Math.max(peak, ...pids.map(rssMB));
    },
  };
}
