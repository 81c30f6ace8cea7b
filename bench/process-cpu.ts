// CPU time of Chromium's processes, by type, from /proc (Linux): where a step's work went, the page's
// renderer (with its workers) or the GPU process (SwiftShader's rendering, compositing and presenting).
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { processes } from './process-memory';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function cpuMs(pid: number): number {
  try {
    // utime and stime: fields 14 and 15, counted after the command name's closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0; // the process ended meanwhile
  }
}

/** Starts counting; stop() gives the CPU ms the renderers and the GPU process spent since. */
export async function countCpu(browser: Browser): Promise<{ stop(): { renderer: number; gpu: number } }> {
  const info = await processes(browser);
  const pids = (type: string): number[] => info.filter((p) => p.type === type).map((p) => p.id);
  const sum = (ids: number[]): number => ids.reduce((total, pid) => total + cpuMs(pid), 0);
  const renderers = pids('renderer');
  const gpu = pids('GPU');
  const start = { renderer: sum(renderers), gpu: sum(gpu) };
  return { stop: () => ({ renderer: sum(renderers) - start.renderer, gpu: sum(gpu) - start.gpu }) };
}
