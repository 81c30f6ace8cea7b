// splitscope mcp: the Model Context Protocol over stdio (the official TypeScript SDK), so that an agent
// can ask what a human asks the CLI: summarize a snapshot, its final state (stats), replay it under a
// config and cap, sweep max_split_size_mb, explain its OOM or peak with fixes checked by replay, compare
// two recordings, predict another size, batch a fleet's files, write a report (mcp-tools.ts). A mistake
// (a file that is not a regular file, a config PyTorch would refuse, an `out` outside the server's
// folder) is answered at once as a tool error naming the parameter; the work runs on worker threads
// (mcp-pool.ts), side by side, each call stopped past its time limit; a message too long to read is
// answered with a JSON-RPC error (mcp-stdio.ts). Whatever happens to one call, the server keeps serving.
// Nothing here writes to stdout: it is the protocol's; what the server has to say goes to stderr.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { rmdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { UsageError } from './cli-format';
import { outFolder } from './mcp-out';
import { McpPool } from './mcp-pool';
import { MAX_MESSAGE_BYTES, messageLines } from './mcp-stdio';
import { paramWords, TOOLS, type ToolContext } from './mcp-tools';

const VERSION = '0.1.0';

/** A call's time limit unless --call-timeout or SPLITSCOPE_MCP_CALL_TIMEOUT says otherwise. */
export const DEFAULT_CALL_TIMEOUT_S = 120;

export interface McpOptions {
  /** --out-dir: the only folder the tools write into (default: a new temporary folder). */
  outDir?: string;
  /** --call-timeout: seconds a call may run (default: SPLITSCOPE_MCP_CALL_TIMEOUT, else 120). */
  callTimeout?: string;
}

/** The time limit in seconds, from --call-timeout, else the environment, else the default. */
function callTimeout(option: string | undefined): number {
  const [text, how] =
    option !== undefined ? [option, '--call-timeout'] : process.env.SPLITSCOPE_MCP_CALL_TIMEOUT ? [process.env.SPLITSCOPE_MCP_CALL_TIMEOUT, 'SPLITSCOPE_MCP_CALL_TIMEOUT'] : [undefined, ''];
  if (text === undefined) return DEFAULT_CALL_TIMEOUT_S;
  const s = Number(text.trim().replace(/s$/i, ''));
  if (text.trim() === '' || !Number.isFinite(s) || s <= 0 || s > 2_000_000) throw new UsageError(`${how} takes the seconds a tool call may run, above 0, not '${text}'`);
  return s;
}

/** SPLITSCOPE_MCP_WORKER_MEMORY_MB: each call's heap limit in MiB (default: Node's). */
function workerMemory(): number | undefined {
  const text = process.env.SPLITSCOPE_MCP_WORKER_MEMORY_MB;
  if (text === undefined || text.trim() === '') return undefined;
  const mb = Number(text);
  if (!Number.isInteger(mb) || mb < 16) throw new UsageError(`SPLITSCOPE_MCP_WORKER_MEMORY_MB takes MiB, a whole number of 16 or more, not '${text}'`);
  return mb;
}

function rmEmpty(folder: string): void {
  try {
    rmdirSync(folder);
  } catch {
    // Not empty: the tools' files stay for the client.
  }
}

const toolError = (text: string) => ({ isError: true, content: [{ type: 'text' as const, text }] });

/** The server: each tool's check on this thread, its work on `pool`'s. */
export function mcpServer(ctx: ToolContext, pool: McpPool): McpServer {
  const server = new McpServer({ name: 'splitscope', version: VERSION });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description(ctx), inputSchema: tool.inputSchema, annotations: tool.annotations },
      async (args: Record<string, unknown>, extra: { signal: AbortSignal }) => {
        let sent: Record<string, unknown>;
        try {
          sent = tool.check(args, ctx);
        } catch (e) {
          return toolError(paramWords((e as Error).message ?? String(e)));
        }
        try {
          return { content: [{ type: 'text' as const, text: await pool.run(tool.name, sent, extra.signal) }] };
        } catch (e) {
          return toolError((e as Error).message);
        }
      },
    );
  }
  return server;
}

/** Serves the tools on stdin/stdout until the client goes: 0, or 1 where stdin failed (said on stderr). */
export async function serveMcp(options: McpOptions = {}): Promise<number> {
  const timeLimit = callTimeout(options.callTimeout);
  const memoryMb = workerMemory();
  const outDir = outFolder(options.outDir);
  const pool = new McpPool({
    entry: fileURLToPath(new URL('./splitscope.mjs', import.meta.url)),
    timeLimit,
    timeLimitHow: 'splitscope mcp --call-timeout SECONDS, or SPLITSCOPE_MCP_CALL_TIMEOUT, sets the limit',
    ...(memoryMb ? { memoryMb } : {}),
  });
  const server = mcpServer({ outDir }, pool);
  let transport: StdioServerTransport | null = null;
  const input = messageLines(process.stdin, (error) => void transport?.send(error as unknown as JSONRPCMessage));
  // Lines reach the transport already cut to MAX_MESSAGE_BYTES: its own limit is never what stops it.
  transport = new StdioServerTransport(input, process.stdout, { maxBufferSize: 2 * MAX_MESSAGE_BYTES + 2 });
  server.server.onerror = (e) => console.error(`splitscope mcp: ${e.message}`);
  await server.connect(transport);
  pool.warm();
  console.error(`splitscope mcp: serving ${TOOLS.length} tools on stdin/stdout; they write only into ${outDir}; a call may run ${timeLimit} s`);
  const code = await new Promise<number>((resolve) => {
    input.on('end', () => resolve(0));
    process.stdin.on('error', (e) => {
      console.error(`splitscope mcp: stopping: stdin failed: ${e.message}`);
      resolve(1);
    });
  });
  // A thread stuck in a read (a FIFO that appeared after its check) cannot be terminated: the server
  // exits all the same once its client is gone.
  const stuck = setTimeout(() => process.exit(code), 2000);
  await pool.close();
  clearTimeout(stuck);
  await server.close().catch(() => {});
  // A temporary folder made for this server and never written into is not left behind.
  if (options.outDir === undefined) rmEmpty(outDir);
  return code;
}
