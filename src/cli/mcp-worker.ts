// splitscope mcp's tool calls run here, each on a worker thread of its own (the bundled CLI started with
// argv ['mcp-worker']), so that the server's thread goes on answering while a call works, and a call can
// be stopped: past its time limit, when the client cancels it, or when its thread runs out of memory
// (mcp-pool.ts). A worker runs one call at a time and answers with the JSON text or the error's message.
import { parentPort } from 'node:worker_threads';
import { paramWords, snakeKeys, toolNamed } from './mcp-tools';

/** A call, as the pool posts it. */
export interface WorkerCall {
  id: number;
  tool: string;
  args: Record<string, unknown>;
}

/** What a worker posts: that it is ready, or a call's answer. */
export type WorkerReply = { ready: true } | { id: number; text: string } | { id: number; error: string };

export function mcpWorker(): Promise<number> {
  const port = parentPort;
  if (!port) throw new Error('mcp-worker runs only as a worker thread of splitscope mcp');
  port.on('message', (call: WorkerCall) => {
    void (async (): Promise<WorkerReply> => {
      try {
        const tool = toolNamed(call.tool);
        if (!tool) throw new Error(`no tool named ${call.tool}`);
        return { id: call.id, text: JSON.stringify(snakeKeys(await tool.run(call.args))) };
      } catch (e) {
        return { id: call.id, error: paramWords((e as Error)?.message ?? String(e)) };
      }
    })().then((reply) => port.postMessage(reply));
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
  // Never settles: the thread lives until the pool ends it.
  return new Promise<number>(() => {});
}
