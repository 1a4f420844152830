import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USAGE, MCP_USAGE, parseCommandLine, UsageError, USAGE } from '../../src/cli/args.js';
import { hydrationProgress } from '../../src/cli/progress.js';
import { assertBuilt, CLI, REPO, runCli } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

describe('mcp flags: --root, per-mount --include/--exclude/--max-bytes, --quiet', () => {
  it('gives each per-mount flag to the --mount before it', () => {
    const command = parseCommandLine([
      'mcp',
      '--mount',
      'a',
      '--include',
      '**/*.ts',
      '--include',
      '*.md',
      '--exclude',
      'dist/**',
      '--max-bytes',
      '1000',
      '--mount',
      'b',
      '--exclude',
      '**/.git/**',
      '--allow',
      '.',
      '--quiet',
    ]);
    expect(command).toMatchObject({
      mounts: [
        { hostPath: 'a', include: ['**/*.ts', '*.md'], exclude: ['dist/**'], maxBytes: 1000 },
        { hostPath: 'b', exclude: ['**/.git/**'] },
      ],
      quiet: true,
    });
  });

  it('--search-timeout sets the deadline of one glob or grep call', () => {
    expect(parseCommandLine(['mcp', '--search-timeout', '2500'])).toMatchObject({ searchTimeoutMs: 2500 });
    expect(parseCommandLine(['mcp'])).not.toHaveProperty('searchTimeoutMs');
  });

  it('--root implies the host backend', () => {
    expect(parseCommandLine(['mcp', '--root', 'work'])).toMatchObject({ backend: 'host', root: 'work' });
    expect(parseCommandLine(['mcp', '--root', 'work', '--backend', 'host'])).toMatchObject({ backend: 'host', root: 'work' });
  });

  it.each([
    [['mcp', '--include', '*.ts', '--mount', 'a', '--allow', '.'], /--include applies to the --mount before it/],
    [['mcp', '--mount', 'a', '--max-bytes', '10k', '--allow', '.'], /--max-bytes must be a whole number/],
    [['mcp', '--mount', 'a', '--max-bytes', '1', '--max-bytes', '2', '--allow', '.'], /--max-bytes is given twice/],
    [['mcp', '--mount', 'a', '--exclude', '', '--allow', '.'], /needs a non-empty glob/],
    [['mcp', '--root', 'x', '--backend', 'memory'], /cannot be used with --backend memory/],
    [['demo', '--quiet'], /option of the mcp command/],
    [['mcp', '--search-timeout', '0'], /--search-timeout must be a positive whole number/],
    [['mcp', '--search-timeout', '1.5s'], /--search-timeout must be a positive whole number/],
    [['help', 'nope'], /no help for "nope"/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

describe('--help for every command, through the built CLI', () => {
  beforeAll(() => assertBuilt());

  it.each([
    [['--help'], USAGE],
    [['help'], USAGE],
    [['mcp', '--help'], MCP_USAGE],
    [['help', 'mcp'], MCP_USAGE],
    [['demo', '-h'], DEMO_USAGE],
    [['help', 'demo'], DEMO_USAGE],
  ])('%j', async (argv, usage) => {
    const result = await runCli(argv);
    expect(result).toEqual({ code: 0, stdout: usage, stderr: '' });
  });

  it('documents the exit codes and every mcp flag', () => {
    expect(USAGE).toMatch(/Exit status: 0 .*; 1 .*; 2 a usage error/s);
    for (const flag of [
      '--root',
      '--mount',
      '--include',
      '--exclude',
      '--max-bytes',
      '--allow',
      '--read-only',
      '--read-before-write',
      '--quiet',
      '--search-timeout',
    ]) {
      expect(MCP_USAGE).toContain(flag);
    }
  });

  it('exits 2 on a misplaced per-mount flag', async () => {
    const result = await runCli(['mcp', '--exclude', 'x', '--mount', 'a', '--allow', '.']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--exclude applies to the --mount before it');
  });
});

describe('hydration progress', () => {
  const sink = (isTTY: boolean) => {
    const writes: string[] = [];
    return { writes, isTTY, write: (text: string) => writes.push(text) };
  };

  it('writes a line rewritten in place on a terminal, throttled, then the final counts', () => {
    const out = sink(true);
    let clock = 0;
    const progress = hydrationProgress(out, { quiet: false, intervalMs: 100, now: () => clock });
    progress.onProgress({ done: 1, files: 1, bytes: 10, path: 'a' });
    clock = 50;
    progress.onProgress({ done: 2, files: 2, bytes: 2048, path: 'b' }); // within the interval: not written
    clock = 150;
    progress.onProgress({ done: 3, files: 3, bytes: 3 * 1024 * 1024, path: 'c' });
    progress.done();
    expect(out.writes).toEqual([
      '\rsessionfs: hydrating: 1 files, 10 B\x1b[K',
      '\rsessionfs: hydrating: 3 files, 3.0 MiB\x1b[K',
      '\rsessionfs: hydrating: 3 files, 3.0 MiB, done\x1b[K\n',
    ]);
  });

  it('is silent with --quiet, and when stderr is not a terminal', () => {
    for (const [isTTY, quiet] of [
      [true, true],
      [false, false],
    ] as const) {
      const out = sink(isTTY);
      const progress = hydrationProgress(out, { quiet });
      progress.onProgress({ done: 1, files: 1, bytes: 1, path: 'a' });
      progress.done();
      expect(out.writes).toEqual([]);
    }
  });
});

describe('sessionfs mcp with per-mount filters and --root, over stdio', () => {
  const tempDir = tempDirs({ prefix: 'sessionfs-flags-', until: 'file' });
  let hostDir: string;
  beforeAll(async () => {
    assertBuilt();
    hostDir = tempDir();
    await mkdir(join(hostDir, 'project/src'), { recursive: true });
    await writeFile(join(hostDir, 'project/src/app.ts'), 'export const a = 1;\n');
    await writeFile(join(hostDir, 'project/src/skip.ts'), 'export const b = 2;\n');
    await writeFile(join(hostDir, 'project/README.md'), '# readme\n');
  });

  async function connect(args: string[]): Promise<{ client: Client; stderr: () => string }> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], cwd: REPO, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'flags-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr: () => stderr };
  }
  const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { text: string }[]).map((c) => c.text).join('\n');

  it('copies only what --include keeps and --exclude does not drop; quiet on a piped stderr', async () => {
    const { client, stderr } = await connect([
      '--mount',
      join(hostDir, 'project'),
      '--include',
      '**/*.ts',
      '--exclude',
      '**/skip.ts',
      '--allow',
      hostDir,
    ]);
    try {
      const listed = text(await client.callTool({ name: 'glob', arguments: { pattern: '**/*' } }));
      expect(listed).toContain('project/src/app.ts');
      expect(listed).not.toContain('skip.ts');
      expect(listed).not.toContain('README.md');
    } finally {
      await client.close();
    }
    expect(stderr()).not.toContain('hydrating');
  });

  it('refuses to start when a mount is over its --max-bytes (exit 1, no host path)', async () => {
    const result = await runCli(['mcp', '--mount', join(hostDir, 'project'), '--max-bytes', '10', '--allow', hostDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/could not start the session/);
    expect(result.stderr).not.toContain(hostDir);
  });

  it('--root works on the given host directory', async () => {
    const root = join(hostDir, 'root');
    await mkdir(root);
    await writeFile(join(root, 'existing.txt'), 'was here\n');
    const { client } = await connect(['--root', root]);
    try {
      expect(text(await client.callTool({ name: 'read_file', arguments: { path: 'existing.txt' } }))).toContain('was here');
      const written = await client.callTool({ name: 'write_file', arguments: { path: 'new.txt', content: 'from the model\n' } });
      expect(written.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    expect(await readFile(join(root, 'new.txt'), 'utf8')).toBe('from the model\n');
  });
});
