import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseCommandLine } from '../../src/cli/args.js';
import { createSession } from '../../src/session/create-session.js';
import { defineTool } from '../../src/session/define-tool.js';
import { workspaceTools } from '../../src/shell/suite.js';
import { shellTool } from '../../src/shell/shell-tool.js';
import { workspacePrompt } from '../../src/tools/prompt.js';
import { sandboxAvailable } from './support.js';

const available = await sandboxAvailable();

describe('the bash tool in sandbox mode', () => {
  it.skipIf(!available)('runs real programs on a memory workspace; a deadline fails the call and rolls it back', async () => {
    const bash = workspaceTools({ shell: 'sandbox' }).find((tool) => tool.name === 'bash')!;
    expect(bash.description).toContain('/workspace');
    expect(bash.annotations?.openWorldHint).toBe(false);
    expect(JSON.stringify(bash.jsonSchema)).not.toContain('network');
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('lib/sum.js', 'module.exports = (a, b) => a + b;\n');
    const ran = await session.runTool(bash, {
      command: 'node -e "console.log(require(\'./sum.js\')(2, 3))" > out.txt; cat out.txt; pwd',
      cwd: 'lib',
    });
    expect(ran).toMatchObject({ success: true, value: { exitCode: 0, stdout: '5\n/workspace/lib\n', changed: ['lib/out.txt'] } });
    const late = await session.runTool(bash, { command: 'echo x > late.txt; sleep 20', timeout_ms: 300 });
    expect(late).toMatchObject({ success: false, rolledBack: true, code: 'ETIMEDOUT' });
    expect(await session.filesystem.exists('late.txt')).toBe(false);
    const failing = await session.runTool(bash, { command: 'node -e "process.exit(4)"' });
    expect(failing).toMatchObject({ success: true, value: { exitCode: 4 } });
  });

  it.skipIf(!available)('a command that makes thousands of files (an install, a build) lists them within maxOutputChars', async () => {
    const bash = shellTool({ mode: 'sandbox', maxOutputChars: 2_000 });
    await using session = await createSession({ backend: 'memory' });
    const ran = await session.runTool(bash, { command: 'mkdir -p deps/package && cd deps/package && seq -w 1 3000 | xargs touch' });
    expect(ran.success).toBe(true);
    // The value keeps every path; the text a model reads says how many more there are.
    expect((ran.value as { changed: string[] }).changed).toHaveLength(3002);
    expect(ran.message.length).toBeLessThan(2_200);
    expect(ran.message).toMatch(/Changed \(3002\): deps, deps\/package, deps\/package\/0001, .*, … and \d+ more\n?$/);
  });

  it('is a mode of shellTool, of workspaceTools, of the prompt and of `sessionfs mcp --shell sandbox`', () => {
    expect(shellTool({ mode: 'sandbox' }).name).toBe('bash');
    expect(() => shellTool({ mode: 'docker' as never })).toThrow(/'sandbox'/);
    expect(workspacePrompt({ shell: 'sandbox' })).toMatch(/Run programs to check your work/);
    expect(workspacePrompt({ shell: true })).not.toMatch(/Run programs to check your work/);
    expect(parseCommandLine(['mcp', '--shell', 'sandbox'])).toMatchObject({ command: 'mcp', shell: 'sandbox' });
    expect(parseCommandLine(['mcp', '--shell=sandbox'])).toMatchObject({ command: 'mcp', shell: 'sandbox' });
    expect(parseCommandLine(['mcp', '--shell'])).toMatchObject({ command: 'mcp', shell: true });
    expect(() => parseCommandLine(['mcp', '--shell', 'sandbox', '--shell-host', '--backend', 'host'])).toThrow(/exclude each other/);
  });
});

describe("a sandboxed program's own paths reach the model as they are", () => {
  /** `$HOME` is the sandbox's private /tmp, and mktemp makes a file there: none of it is the host's. */
  const SANDBOX_PATHS = 'echo $HOME; mktemp; cd /tmp && pwd';
  const expectSandboxPaths = (text: string): void => {
    expect(text).not.toContain('<host path>');
    expect(text).toMatch(/^\/tmp$/m);
    expect(text).toMatch(/^\/tmp\/tmp\.\w+$/m);
  };

  it.skipIf(!available).each(['memory', 'host'] as const)('through the bash tool in sandbox mode (%s)', async (backend) => {
    await using session = await createSession({ backend });
    const ran = await session.runTool(shellTool({ mode: 'sandbox' }), { command: SANDBOX_PATHS });
    expect(ran.success).toBe(true);
    expectSandboxPaths(ran.message);
  });

  it.skipIf(!available)("through a tool's own call of context.session.exec", async () => {
    await using session = await createSession({ backend: 'memory' });
    const tool = defineTool({
      name: 'run',
      description: 'runs a command in the sandbox',
      parameters: z.object({}),
      async handler(_params, context) {
        const result = await context.session.exec(SANDBOX_PATHS);
        return { success: true, message: result.stdout };
      },
    });
    expectSandboxPaths((await session.runTool(tool, {})).message);
  });

  it("the session still hides the host's side: its root, sessionfs's temp directories, a host shell's temp files", async () => {
    await using session = await createSession({ backend: 'host' });
    const root = session.filesystem.root;
    const ownTemp = join(tmpdir(), 'sessionfs-mirror-1.2.abcdef-XyZ123', 'a.txt');
    const tool = defineTool({
      name: 'tell',
      description: 'names host paths',
      parameters: z.object({}),
      handler: async () => ({ success: true, message: `at ${join(root, 'x.txt')}; in ${ownTemp}; bare ${ownTemp.slice(1)}` }),
    });
    expect((await session.runTool(tool, {})).message).toBe('at /x.txt; in <host path>; bare <host path>/a.txt');
    const hostShell = await session.runTool(shellTool({ mode: 'host', allowedCommands: ['mktemp', 'rm'] }), {
      command: 'f=$(mktemp); echo $f; rm $f',
    });
    expect(hostShell.message).toContain('<host path>');
    expect(hostShell.message).not.toContain(tmpdir());
  });
});
