// splitscope mcp's machinery on its own: the worker pool (with a stand-in worker script: calls side by
// side, a time limit, a thread that runs out of memory or exits, a cancelled call, the pool going on
// after each), the input's lines (one over the read limit answered under its id, or id null; a line
// that is not JSON answered; the next line read), and the out folder's confinement.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, expect, test } from 'vitest';
import { confinedOut } from '../../src/cli/mcp-out';
import { McpPool } from '../../src/cli/mcp-pool';
import { idOf, messageLines, type RpcError } from '../../src/cli/mcp-stdio';

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'splitscope-mcp-pool-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// Answers as mcp-worker.ts does; each tool name is a way a call can go.
const entry = join(tmp, 'worker.mjs');
writeFileSync(
  entry,
  `import { parentPort } from 'node:worker_threads';
parentPort.on('message', ({ id, tool, args }) => {
  if (tool === 'hog') { const all = []; for (;;) all.push(new Array(1e5).fill(all.length)); }
  if (tool === 'hang') return;
  if (tool === 'exit') process.exit(3);
  if (tool === 'fail') return parentPort.postMessage({ id, error: 'failed as asked' });
  if (tool === 'print') console.log('not on the protocol');
  setTimeout(() => parentPort.postMessage({ id, text: JSON.stringify({ tool, ...args }) }), args.ms ?? 0);
});
parentPort.postMessage({ ready: true });
`,
);
const pool = (timeLimit = 30) => new McpPool({ entry, timeLimit, timeLimitHow: 'the test sets it', memoryMb: 32 });

test('calls run side by side, and a thread that dies or runs past its limit is one tool error', async () => {
  const p = pool(1);
  p.warm();
  try {
    const order: string[] = [];
    const slow = p.run('wait', { ms: 600 }).then((t) => order.push(t));
    const fast = p.run('echo', { n: 1 }).then((t) => order.push(t));
    await Promise.all([slow, fast]);
    expect(order).toEqual(['{"tool":"echo","n":1}', '{"tool":"wait","ms":600}']);

    await expect(p.run('fail', {})).rejects.toThrow(/^failed as asked$/);
    await expect(p.run('hang', {})).rejects.toThrow(/^hang took longer than 1 s and was stopped \(the test sets it\)$/);
    await expect(p.run('hog', {})).rejects.toThrow(/^hog ran out of memory on its worker thread and was stopped \(each call may use 32 MiB of heap\); the server goes on$/);
    await expect(p.run('exit', {})).rejects.toThrow(/^exit stopped: its worker thread exited \(code 3\)/);
    const cancel = new AbortController();
    const cancelled = p.run('hang', {}, cancel.signal);
    setTimeout(() => cancel.abort(), 50);
    await expect(cancelled).rejects.toThrow(/^hang was cancelled$/);
    // What a thread prints does not reach the protocol's stdout; the answer still comes.
    expect(await p.run('print', {})).toBe('{"tool":"print"}');
    expect(await p.run('echo', { n: 2 })).toBe('{"tool":"echo","n":2}');
  } finally {
    await p.close();
  }
}, 60_000);

/** `lines` fed as `chunks` through messageLines: what reaches the SDK, and what was answered. */
async function feed(chunks: (string | Buffer)[], limit: number): Promise<{ passed: string[]; answered: RpcError[] }> {
  const input = new PassThrough();
  const answered: RpcError[] = [];
  const out = messageLines(input, (e) => answered.push(e), limit);
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const ended = new Promise((resolve) => out.on('end', resolve));
  for (const c of chunks) input.write(c);
  input.end();
  await ended;
  return { passed: text.split('\n').filter((l) => l !== ''), answered };
}

test('a line over the limit is answered under its id where it shows, else id null, and the next line is read', async () => {
  const ok = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  const long = 'x'.repeat(200);
  // The SDK's client writes the id last; others first; a long line arrives in many chunks.
  const sdk = `{"method":"tools/call","params":{"name":"summarize","arguments":{"file":"${long}","id":9}},"jsonrpc":"2.0","id":7}`;
  const first = `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"x":"${long}"}}`;
  const { passed, answered } = await feed([ok, '\n', sdk.slice(0, 50), sdk.slice(50, 120), sdk.slice(120), '\n', `${first}\n`, `${long}\n`, 'not json\n', '[1]\n', `${ok}\n`], 100);
  expect(passed).toEqual([ok, ok]);
  expect(answered.map((a) => [a.id, a.error.code])).toEqual([
    [7, -32600],
    ['a-1', -32600],
    [null, -32600],
    [null, -32700],
    [null, -32600],
  ]);
  expect(answered[0]!.error.message).toMatch(new RegExp(`^a message of ${sdk.length} bytes .* is over this server's limit of 100 bytes`));
  // A nested "id" at the end of the params is not the message's.
  expect(idOf('{"method":"x","params":{"a":{"id":5}}}', '{"method":"x","params":{"a":{"id":5}}}')).toBe(null);
});

test("an out path: inside the server's folder, or refused by name", () => {
  const folder = join(tmp, 'out');
  mkdirSync(join(folder, 'sub'), { recursive: true });
  mkdirSync(join(tmp, 'else'));
  symlinkSync(join(tmp, 'else'), join(folder, 'away'));
  symlinkSync(join(folder, 'sub'), join(folder, 'near'));
  symlinkSync(join(tmp, 'else', 'f.html'), join(folder, 'f.html'));
  expect(confinedOut(folder, 'a.html', 'out')).toBe(join(folder, 'a.html'));
  expect(confinedOut(folder, join(folder, 'sub', 'a.html'), 'out')).toBe(join(folder, 'sub', 'a.html'));
  expect(confinedOut(folder, 'near/a.html', 'out')).toBe(join(folder, 'sub', 'a.html'));
  expect(confinedOut(folder, '..a.html', 'out')).toBe(join(folder, '..a.html'));
  expect(() => confinedOut(folder, '../a.html', 'out')).toThrow(/^out: \.\.\/a\.html is outside the folder/);
  expect(() => confinedOut(folder, '/etc/passwd', 'out')).toThrow(/is outside/);
  expect(() => confinedOut(folder, '.', 'out')).toThrow(/is outside/);
  expect(() => confinedOut(folder, 'away/a.html', 'out')).toThrow(/leads \(through a symbolic link\) outside/);
  expect(() => confinedOut(folder, 'f.html', 'out')).toThrow(/f\.html is a symbolic link to nothing/);
  writeFileSync(join(tmp, 'else', 'f.html'), 'x');
  expect(() => confinedOut(folder, 'f.html', 'out')).toThrow(/leads \(through a symbolic link\) outside/);
  expect(() => confinedOut(folder, '', 'out')).toThrow(/^out is empty/);
});
