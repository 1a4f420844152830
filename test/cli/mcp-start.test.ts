import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildMcpServer, createMcpServer } from '../../src/cli/mcp-server.js';
import { createSession } from '../../src/session/index.js';
import type { Session } from '../../src/session/types.js';
import { assertBuilt, CLI, connectInMemory, REPO } from './support.js';

describe('the MCP server snapshots the starting state while it answers the first calls', () => {
  for (const backend of ['memory', 'host'] as const) {
    it(`a write sent at once still finds "initial" as the server started (${backend})`, async () => {
      await using session = await createSession({ backend, rollback: 'journal' });
      const files = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`src/f${i}.txt`, `file ${i}\n`]));
      for (const [path, content] of Object.entries(files)) await session.filesystem.write(path, content);
      const server = await createMcpServer(session);
      const client = await connectInMemory(server);
      try {
        const [read, written] = await Promise.all([
          client.callTool({ name: 'read_file', arguments: { path: 'src/f1.txt' } }),
          client.callTool({ name: 'write_file', arguments: { path: 'src/f0.txt', content: 'changed\n' } }),
        ]);
        expect(read.isError).toBe(false);
        expect(written.isError).toBe(false);
        const diff = await client.callTool({ name: 'diff', arguments: {} });
        expect((diff.content as { text: string }[])[0]?.text).toContain('M src/f0.txt');
        expect((await client.callTool({ name: 'restore', arguments: { id: 'initial' } })).isError).toBe(false);
        expect((await session.filesystem.read('src/f0.txt')).content).toMatch(/^file 0\n?$/);
      } finally {
        await client.close();
      }
    });
  }
});

describe('a server loads the modules of its own backend only', () => {
  // What `sessionfs mcp` loads is most of its start (the official server starts in about 150 ms): a session
  // on one backend must not load another's modules (the host backend and the composition are ~40 modules).
  const loadedBy = (backend: string): Promise<string[]> =>
    new Promise((done, fail) => {
      const hooks = `export async function load(url, context, next) { if (url.includes('/dist/src/')) process.stderr.write('LOADED ' + url.split('/dist/src/')[1] + '\\n'); return next(url, context); }`;
      const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
      const script = `const { createSession } = await import(${JSON.stringify(join(REPO, 'dist/src/session/index.js'))}); const session = await createSession({ backend: '${backend}' }); await session.filesystem.write('a.txt', 'a'); await session.dispose();`;
      execFile(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', script],
        (error, _stdout, stderr) => {
          if (error) fail(error);
          else done([...stderr.matchAll(/^LOADED (.+)$/gm)].map((match) => match[1] as string));
        },
      );
    });

  it('memory: no host backend, no composition; host: no composition', async () => {
    assertBuilt();
    // Shared helpers (the composition's namespace registry, git's name escaping) may load; the backends may not.
    const composition = (paths: string[]) =>
      paths.filter((path) => path.startsWith('compose/') && path !== 'compose/namespace-registry.js');
    const memory = await loadedBy('memory');
    expect(memory).toContain('backends/memory/index.js');
    expect(memory).not.toContain('backends/host/index.js');
    expect(composition(memory)).toEqual([]);
    const host = await loadedBy('host');
    expect(host).toContain('backends/host/index.js');
    expect(composition(host)).toEqual([]);
  });
});

describe('the sessionfs command is one bundled file', () => {
  // Loading ~340 modules (ours, the MCP SDK, zod and its locales, ajv) was most of `sessionfs mcp`'s start;
  // scripts/bundle-cli.mjs makes the command one file. What it loads on first use (git objects, the shell
  // interpreter) still comes from node_modules.
  it('starts without loading any other module of the package or of its dependencies', async () => {
    assertBuilt();
    const hooks = `export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\n'); return next(url, context); }`;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
    const loaded = await new Promise<string[]>((done, fail) => {
      execFile(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(register)}`, CLI, '--version'],
        (error, stdout, stderr) => {
          if (error) fail(error);
          else {
            expect(stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
            done([...stderr.matchAll(/^LOADED (.+)$/gm)].map((match) => match[1] as string));
          }
        },
      );
    });
    expect(loaded).toEqual([pathToFileURL(CLI).href]);
  });
});

describe('the MCP server answers before its session has started (sessionfs mcp hydrates after initialize)', () => {
  it('initializes and lists its tools at once; a call waits for the session', async () => {
    let start!: (session: Session) => void;
    const ready = new Promise<Session>((resolve) => (start = resolve));
    const { server } = await buildMcpServer({ ready, readOnly: false });
    const client = await connectInMemory(server);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('read_file');
      expect(names).toContain('write_file');
      let answered = false;
      const read = client.callTool({ name: 'read_file', arguments: { path: 'big/a.txt' } }).then((result) => {
        answered = true;
        return result;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered).toBe(false);
      const session = await createSession({ backend: 'memory' });
      await session.filesystem.write('big/a.txt', 'hydrated\n');
      start(session);
      const result = await read;
      expect(result.isError).toBe(false);
      expect((result.content as { text: string }[])[0]?.text).toContain('hydrated');
      await session.dispose();
    } finally {
      await client.close();
    }
  });

  it('fails every call with the reason, naming no host path, when the session could not start', async () => {
    const ready = Promise.reject(new Error('/secret/host/path is not allowed'));
    const { server } = await buildMcpServer({ ready, readOnly: true });
    const client = await connectInMemory(server);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).not.toContain('write_file');
      const result = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
      expect(result.isError).toBe(true);
      const text = (result.content as { text: string }[])[0]?.text ?? '';
      expect(text).toMatch(/^the session could not start: <path> is not allowed\. /);
      expect(text).not.toContain('/secret');
    } finally {
      await client.close();
    }
  });
});
