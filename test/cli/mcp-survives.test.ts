import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, REPO } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

const tempDir = tempDirs({ prefix: 'sessionfs-epipe-' });

/** The built server, spoken to line by line; answers collected by id. */
function server(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'mcp', ...args], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  type Answer = { id?: number; result?: { content?: { text: string }[]; isError?: boolean }; error?: unknown };
  const answers = new Map<number, Answer>();
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (let end = out.indexOf('\n'); end !== -1; end = out.indexOf('\n')) {
      const message = JSON.parse(out.slice(0, end)) as Answer;
      out = out.slice(end + 1);
      if (typeof message.id === 'number') answers.set(message.id, message);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const answer = async (id: number) => {
    for (let waited = 0; !answers.has(id); waited += 10) {
      if (waited > 10_000) throw new Error(`no answer to ${id}; stderr: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return answers.get(id);
  };
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'survive-test', version: '1' } },
  });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const call = (id: number, name: string, args: unknown) =>
    send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  return { child, send, call, answer, exited, stderr: () => err };
}

describe('sessionfs mcp outlives a bad message and a dead client, and keeps the work', () => {
  beforeAll(() => assertBuilt());

  it('drops a response nested thousands deep (a request so deep answered with an error) and keeps serving', async () => {
    const served = server([]);
    await served.answer(0);
    let deep = '1';
    for (let depth = 0; depth < 5000; depth += 1) deep = `[${deep}]`;
    served.child.stdin.write(`{"jsonrpc":"2.0","id":12345,"result":{"nested":${deep}}}\n`);
    served.child.stdin.write(`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"x":${deep}}}}\n`);
    served.call(1, 'write_file', { path: 'a.txt', content: 'still here\n' });
    await served.answer(1);
    served.call(2, 'read_file', { path: 'a.txt' });
    expect((await served.answer(2))?.result?.content?.[0]?.text).toContain('still here');
    expect(served.child.exitCode).toBe(null);
    expect(await served.answer(7)).toBeDefined();
    served.child.stdin.end();
    expect(await served.exited).toBe(0);
    expect(served.stderr()).not.toContain('RangeError');
  });

  it('a client that stops reading stdout ends the session through the exit work: the patch is written', async () => {
    const hostDir = tempDir();
    const patch = join(hostDir, 'work.patch');
    const served = server(['--patch-out', patch]);
    served.call(1, 'write_file', { path: 'kept.txt', content: 'the work\n' });
    await served.answer(1);
    served.child.stdout.destroy();
    // stdin stays open: the server finds the client gone when it answers.
    served.call(2, 'read_file', { path: 'kept.txt' });
    expect(await served.exited).toBe(0);
    expect(await readFile(patch, 'utf8')).toContain('+the work');
    expect(served.stderr()).toContain("sessionfs: wrote the session's patch (1 file changed)");
    expect(served.stderr()).not.toContain('Unhandled');
  });
});
