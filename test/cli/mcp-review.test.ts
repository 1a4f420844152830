import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { userConfirmation } from '../../src/cli/mcp-review.js';
import { createMcpServer, type McpServerOptions } from '../../src/cli/mcp-server.js';
import { createSession, type CreateSessionOptions, type HydratedSession } from '../../src/session/index.js';

type Answer = ElicitResult | 'unsupported';
interface Content {
  type: string;
  text?: string;
  resource?: { uri: string; mimeType: string; text: string };
}

describe('review over MCP: diff hunks, export_patch, write_back with elicitation (official SDK client)', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  /** A session hydrated from a host project (`p/`), served to a client that answers elicitations with `answers`. */
  async function connect(answers: Answer[], serverOptions: McpServerOptions = {}, sessionOptions: Partial<CreateSessionOptions> = {}) {
    const project = mkdtempSync(join(tmpdir(), 'sessionfs-review-'));
    writeFileSync(join(project, 'a.txt'), 'one\ntwo\nthree\n');
    const session: HydratedSession = await createSession({
      backend: 'memory',
      sources: [{ hostPath: project, path: 'p' }],
      allowedHostRoots: [project],
      ...sessionOptions,
    });
    const server = await createMcpServer(session, serverOptions);
    const asked: string[] = [];
    const supported = answers[0] !== 'unsupported';
    const client = new Client({ name: 'review-test', version: '1.0.0' }, supported ? { capabilities: { elicitation: { form: {} } } } : {});
    if (supported)
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message);
        return answers.shift() as ElicitResult;
      });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    cleanup.push(
      () => rmSync(project, { recursive: true, force: true }),
      () => session.dispose(),
      () => client.close(),
    );
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await client.callTool({ name, arguments: args });
      return { isError: result.isError === true, content: result.content as Content[], text: (result.content as Content[])[0]?.text ?? '' };
    };
    return { session, client, call, asked, project, server };
  }

  it('diff returns unified hunks after the names, capped at 64 KiB with a note', async () => {
    const { call } = await connect([]);
    await call('edit_file', { path: 'p/a.txt', old_string: 'two', new_string: 'TWO' });
    const small = await call('diff');
    expect(small.isError).toBe(false);
    expect(small.text).toContain('M p/a.txt');
    expect(small.text).toContain('@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n');
    for (let i = 0; i < 40; i += 1)
      await call('write_file', { path: `p/big-${String(i).padStart(2, '0')}.txt`, content: `${i}\n`.repeat(2000) });
    const big = await call('diff');
    expect(Buffer.byteLength(big.text)).toBeLessThan(70 * 1024);
    expect(big.text).toMatch(
      /\[diff truncated: \d+ of \d+ bytes shown, \d+ more file\(s\) left out; call export_patch for the whole patch\]\n$/,
    );
  });

  it('export_patch returns the whole patch since the start as an embedded text/x-diff resource', async () => {
    const { call, session } = await connect([]);
    await call('write_file', { path: 'p/new.txt', content: 'new\n' });
    const result = await call('export_patch');
    expect(result.isError).toBe(false);
    const resource = result.content[1]?.resource;
    expect(resource).toMatchObject({ uri: 'sessionfs://patches/initial..now.patch', mimeType: 'text/x-diff' });
    expect(resource?.text).toContain('diff --git a/p/new.txt b/p/new.txt\nnew file mode 100644');
    const snapshots = session.filesystem;
    expect(resource?.text).toBe(await snapshots.patch(session.snapshots[0]!));
  });

  it('write_back dry_run plans without writing; the real run applies after the user accepts, never over a conflict', async () => {
    const { call, asked, project } = await connect([{ action: 'accept', content: { confirm: true } }]);
    await call('edit_file', { path: 'p/a.txt', old_string: 'one', new_string: 'ONE' });
    await call('write_file', { path: 'p/b.txt', content: 'b\n' });
    writeFileSync(join(project, 'b.txt'), 'changed on the host\n'); // a conflict: the host made b.txt meanwhile
    const plan = await call('write_back', { dry_run: true });
    expect(plan.text).toMatch(/write \(1\):\n {2}p\/a\.txt\n/);
    expect(plan.text).toMatch(/conflicts, left as they are on the host \(1\):\n {2}p\/b\.txt/);
    expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(asked).toEqual([]);
    const done = await call('write_back');
    expect(done.isError).toBe(false);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('p/a.txt');
    expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('ONE\ntwo\nthree\n');
    expect(readFileSync(join(project, 'b.txt'), 'utf8')).toBe('changed on the host\n');
    expect(JSON.stringify([plan, done])).not.toContain(project);
  });

  for (const answer of [{ action: 'decline' }, { action: 'cancel' }, { action: 'accept', content: { confirm: false } }] as ElicitResult[])
    it(`write_back writes nothing when the user answers ${JSON.stringify(answer)}`, async () => {
      const { call, asked, project } = await connect([answer]);
      await call('edit_file', { path: 'p/a.txt', old_string: 'one', new_string: 'ONE' });
      const refused = await call('write_back');
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^Error \[EPERM\]: the user (declined|cancelled) the write-back\. Nothing was written\./);
      expect(asked).toHaveLength(1);
      expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    });

  it('a client without elicitation gets write_back only with --allow-write-back', async () => {
    const refusedSession = await connect(['unsupported']);
    await refusedSession.call('edit_file', { path: 'p/a.txt', old_string: 'one', new_string: 'ONE' });
    const refused = await refusedSession.call('write_back');
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/--allow-write-back/);
    expect(readFileSync(join(refusedSession.project, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    const allowed = await connect(['unsupported'], { allowWriteBack: true });
    await allowed.call('edit_file', { path: 'p/a.txt', old_string: 'one', new_string: 'ONE' });
    expect((await allowed.call('write_back')).isError).toBe(false);
    expect(readFileSync(join(allowed.project, 'a.txt'), 'utf8')).toBe('ONE\ntwo\nthree\n');
  });

  it('lists write_back only for a session with sources to write to', async () => {
    const session = await createSession({ backend: 'memory' });
    cleanup.push(() => session.dispose());
    const server = await createMcpServer(session);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'plain', version: '1.0.0' });
    await client.connect(clientSide);
    cleanup.push(() => client.close());
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('export_patch');
    expect(names).not.toContain('write_back');
    const { client: withMounts } = await connect([]);
    expect((await withMounts.listTools()).tools.map((tool) => tool.name)).toContain('write_back');
  });

  it('a confirm policy asks the user through elicitation: declined is EPERM, accepted goes ahead', async () => {
    const confirmation = userConfirmation();
    const { call, asked, server } = await connect(
      [{ action: 'decline' }, { action: 'accept', content: { confirm: true } }],
      {},
      { policy: { confirm: confirmation.confirm } },
    );
    confirmation.attach(server);
    const declined = await call('delete', { path: 'p/a.txt' });
    expect(declined.isError).toBe(true);
    expect(declined.text).toMatch(/EPERM/);
    const accepted = await call('delete', { path: 'p/a.txt' });
    expect(accepted.isError).toBe(false);
    expect(asked).toEqual(['The agent asks: Delete p/a.txt?', 'The agent asks: Delete p/a.txt?']);
  });
});
