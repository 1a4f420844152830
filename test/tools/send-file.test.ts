import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { defineTool } from '../../src/session/define-tool.js';
import { type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { InvalidArgumentError } from '../../src/workspace/errors.js';
import { z } from 'zod';
import { PNG } from './helpers.js';
import { SESSION_KINDS } from '../support/backends.js';

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

describe('send_file and the session outbox', () => {
  for (const backend of SESSION_KINDS) {
    it(`records what was sent, pinned to its bytes at that moment (${backend})`, async () => {
      await using session = await createSession({ backend });
      const tools = new Map(workspaceTools().map((t) => [t.name, t]));
      const run = (name: WorkspaceToolName, params: unknown) => session.runTool(tools.get(name)!, params);
      await session.filesystem.write('out/report.md', '# Report\nall good\n');
      await session.filesystem.writeBytes('chart.png', PNG);

      const sent = await run('send_file', { path: '/out/report.md', description: 'the weekly report' });
      expect(sent).toMatchObject({ success: true, rolledBack: false });
      expect(sent.message).toBe('Sent out/report.md to the user as output-1 (18 B, text/markdown).');
      expect(sent.value).toEqual({
        output: { id: 'output-1', path: 'out/report.md', sizeBytes: 18, mimeType: 'text/markdown', description: 'the weekly report' },
      });
      expect(await run('send_file', { path: 'chart.png' })).toMatchObject({ success: true });

      const [report, chart] = session.outputs;
      expect(report).toMatchObject({ id: 'output-1', path: 'out/report.md', sizeBytes: 18, mimeType: 'text/markdown' });
      expect(chart).toMatchObject({ id: 'output-2', path: 'chart.png', sizeBytes: PNG.length, mimeType: 'image/png' });
      expect(chart?.description).toBeUndefined();
      expect(Buffer.from(session.readOutput('output-2'))).toEqual(PNG);

      // Pinned: later writes, a rollback to before the send and a reset leave what was sent alone.
      const before = session.snapshots[0]!;
      await session.filesystem.write('out/report.md', 'rewritten\n');
      expect(text(session.readOutput('output-1'))).toBe('# Report\nall good\n');
      await session.rollbackTo(before);
      await session.filesystem.delete('out', { recursive: true });
      expect(text(session.readOutput('output-1'))).toBe('# Report\nall good\n');
      // The record's snapshot holds the sent content.
      const tree = await session.filesystem.snapshotTree(report!.snapshot);
      const entry = await tree.entry('out/report.md');
      expect(entry?.kind === 'file' && text(await entry.bytes())).toBe('# Report\nall good\n');
      await session.reset();
      expect(session.outputs.map((o) => o.id)).toEqual(['output-1', 'output-2']);
      expect(text(session.readOutput('output-1'))).toBe('# Report\nall good\n');

      // A copy each time: changing what readOutput returned changes nothing.
      session.readOutput('output-1').fill(0);
      expect(text(session.readOutput('output-1'))).toBe('# Report\nall good\n');
    });
  }

  it('hands out copies of what was sent, whatever bytes the file was written from', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.writeBytes('a.txt', Buffer.from('hello'));
    await session.runTool(
      workspaceTools().find((t) => t.name === 'send_file')!,
      { path: 'a.txt' },
    );
    session.readOutput('output-1').fill(0x21);
    expect(text(session.readOutput('output-1'))).toBe('hello');
    expect((await session.filesystem.read('a.txt')).content).toBe('hello');
  });

  it('refuses directories, missing and oversized files, and sends nothing then', async () => {
    await using session = await createSession({ backend: 'memory' });
    const tools = new Map(workspaceTools({ maxSendBytes: 4 }).map((t) => [t.name, t]));
    const run = (path: string) => session.runTool(tools.get('send_file')!, { path });
    await session.filesystem.write('dir/big.txt', 'too big');
    expect(await run('dir')).toMatchObject({ success: false, code: 'EISDIR' });
    expect(await run('nothing.txt')).toMatchObject({ success: false, code: 'ENOENT' });
    const big = await run('dir/big.txt');
    expect(big).toMatchObject({ success: false, code: 'EFBIG' });
    expect(big.message).toContain('at most 4');
    expect(session.outputs).toEqual([]);
  });

  it('an unknown output id is a typed error naming the known ones', async () => {
    await using session = await createSession({ backend: 'memory' });
    expect(() => session.readOutput('output-1')).toThrow(InvalidArgumentError);
    expect(() => session.readOutput('output-1')).toThrow(/nothing has been sent/);
    await session.filesystem.write('a.txt', 'a');
    await session.runTool(
      workspaceTools().find((t) => t.name === 'send_file')!,
      { path: 'a.txt' },
    );
    expect(() => session.readOutput('output-9')).toThrow(/known ids: output-1/);
  });

  it('a call that fails after sending is taken as not done: nothing is sent', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('a.txt', 'a');
    const sendFile = workspaceTools().find((t) => t.name === 'send_file')!;
    const sendThenFail = defineTool({
      name: 'send_then_fail',
      description: 'sends a file, then fails',
      parameters: z.object({}),
      handler: async (_params, context) => {
        const sent = await sendFile.handler({ path: 'a.txt' }, context);
        expect(sent.success).toBe(true);
        return { success: false, message: 'changed my mind' };
      },
    });
    expect(await session.runTool(sendThenFail, {})).toMatchObject({ success: false, rolledBack: true });
    expect(session.outputs).toEqual([]);
    const abort = new AbortController();
    const sendAborted = defineTool({
      name: 'send_aborted',
      description: 'sends a file after its call was aborted',
      parameters: z.object({}),
      handler: async (_params, context) => {
        abort.abort();
        return sendFile.handler({ path: 'a.txt' }, context);
      },
    });
    expect(await session.runTool(sendAborted, {}, { signal: abort.signal })).toMatchObject({ success: false, code: 'ABORT_ERR' });
    expect(session.outputs).toEqual([]);
  });

  it('names text without a known extension text/plain, and other bytes application/octet-stream', async () => {
    await using session = await createSession({ backend: 'memory' });
    const sendFile = workspaceTools().find((t) => t.name === 'send_file')!;
    await session.filesystem.write('NOTES', 'plain text\n');
    await session.filesystem.writeBytes('blob.bin', Uint8Array.from([0, 1, 2, 0xff]));
    await session.runTool(sendFile, { path: 'NOTES' });
    await session.runTool(sendFile, { path: 'blob.bin' });
    expect(session.outputs.map((o) => o.mimeType)).toEqual(['text/plain', 'application/octet-stream']);
  });

  it('works in a read-only session (sending changes nothing in the workspace)', async () => {
    await using session = await createSession({ backend: 'memory', readOnly: true });
    expect(
      await session.runTool(
        workspaceTools().find((t) => t.name === 'send_file')!,
        { path: 'x' },
      ),
    ).toMatchObject({ code: 'ENOENT' });
  });
});
