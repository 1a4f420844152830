import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, REPO, runCli } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

const tempDir = tempDirs({ prefix: 'sessionfs-trust-' });

/** A host directory holding `root/` (one file) and `lib/` and `docs/` (to mount). */
async function hostTree(): Promise<string> {
  const hostDir = tempDir();
  await mkdir(join(hostDir, 'root'));
  await writeFile(join(hostDir, 'root/own.txt'), 'the root file\n');
  await mkdir(join(hostDir, 'lib/src'), { recursive: true });
  await writeFile(join(hostDir, 'lib/src/util.ts'), 'export const util = 1;\n');
  await mkdir(join(hostDir, 'docs'));
  await writeFile(join(hostDir, 'docs/guide.md'), '# Guide\n');
  return hostDir;
}

interface Served {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  seen: string[];
  stderr(): string;
}

async function serve(args: string[]): Promise<Served> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], cwd: REPO, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'trust-test', version: '1.0.0' });
  await client.connect(transport);
  const seen: string[] = [];
  return {
    client,
    seen,
    stderr: () => stderr,
    async call(name, args) {
      const result = await client.callTool({ name, arguments: args });
      const text = (result.content as { text?: string }[]).map((c) => c.text ?? '').join('\n');
      seen.push(text);
      return { text, isError: result.isError === true };
    },
  };
}

describe('sessionfs mcp: each flag does what its name says', () => {
  beforeAll(() => assertBuilt());

  it('--root must exist: a missing one exits 2 naming the flag and the value, and is not created', async () => {
    const hostDir = await hostTree();
    const missing = join(hostDir, 'no-such-root');
    const result = await runCli(['mcp', '--root', missing]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--root ${JSON.stringify(missing)}: no such directory`);
    await expect(readdir(missing)).rejects.toMatchObject({ code: 'ENOENT' });
    const file = join(hostDir, 'root/own.txt');
    expect(await runCli(['mcp', '--root', file])).toMatchObject({ code: 2, stderr: expect.stringContaining('is not a directory') });
  });

  it('--root with --mount shows the mount beside the root, never copying it into the real root', async () => {
    const hostDir = await hostTree();
    const root = join(hostDir, 'root');
    const patch = join(hostDir, 'out.patch');
    const served = await serve([
      '--root',
      root,
      '--mount',
      `${join(hostDir, 'lib')}:/vendor/lib`,
      '--mount',
      `${join(hostDir, 'docs')}:/ref:ro`,
      '--allow',
      hostDir,
      '--patch-out',
      patch,
      '--write-back',
    ]);
    const { call } = served;
    try {
      expect((await call('read_file', { path: 'vendor/lib/src/util.ts' })).text).toContain('export const util = 1;');
      expect((await call('read_file', { path: 'own.txt' })).text).toContain('the root file');
      expect((await call('write_file', { path: 'model.txt', content: 'by the model\n' })).isError).toBe(false);
      expect((await call('edit_file', { path: 'vendor/lib/src/util.ts', old_string: '= 1', new_string: '= 2' })).isError).toBe(false);
      const refused = await call('write_file', { path: 'ref/new.md', content: 'x\n' });
      expect(refused).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \[EROFS\]/) });
      expect((await call('delete', { path: 'vendor' })).isError).toBe(true);
    } finally {
      await served.client.close();
    }
    // The real root holds what it held and what the model wrote there: nothing of the mounts.
    expect((await readdir(root)).sort()).toEqual(['model.txt', 'own.txt']);
    expect(await readFile(join(root, 'model.txt'), 'utf8')).toBe('by the model\n');
    // The writable mount's change went back to its source; the :ro one is as it was.
    expect(await readFile(join(hostDir, 'lib/src/util.ts'), 'utf8')).toBe('export const util = 2;\n');
    expect(await readdir(join(hostDir, 'docs'))).toEqual(['guide.md']);
    const written = await readFile(patch, 'utf8');
    expect(written).toContain('diff --git a/model.txt b/model.txt');
    expect(written).toContain('diff --git a/vendor/lib/src/util.ts b/vendor/lib/src/util.ts');
    for (const text of served.seen) expect(text).not.toContain(hostDir);
  });

  it('--root with --mount and --read-only serves both and changes neither', async () => {
    const hostDir = await hostTree();
    const root = join(hostDir, 'root');
    const served = await serve(['--root', root, '--mount', `${join(hostDir, 'lib')}:/lib`, '--allow', hostDir, '--read-only']);
    try {
      expect((await served.call('read_file', { path: 'lib/src/util.ts' })).text).toContain('util = 1');
      expect((await served.call('grep', { pattern: 'root file' })).text).toContain('own.txt');
      expect((await served.call('diff', {})).text).toBe('No changes between initial and now.');
    } finally {
      await served.client.close();
    }
    expect((await readdir(root)).sort()).toEqual(['own.txt']);
  });

  for (const backend of ['memory', 'host', 'overlay'] as const) {
    it(`a :ro mount refuses the model's writes with EROFS during the session (${backend})`, async () => {
      const hostDir = await hostTree();
      const served = await serve([
        ...(backend === 'overlay' ? ['--overlay'] : ['--backend', backend]),
        '--mount',
        `${join(hostDir, 'docs')}:/ref:ro`,
        '--mount',
        `${join(hostDir, 'lib')}:/lib`,
        '--allow',
        hostDir,
      ]);
      const { call } = served;
      try {
        expect((await call('read_file', { path: 'ref/guide.md' })).text).toContain('# Guide');
        for (const [name, args] of [
          ['write_file', { path: 'ref/new.md', content: 'x\n' }],
          ['edit_file', { path: 'ref/guide.md', old_string: 'Guide', new_string: 'Handbook' }],
          ['delete', { path: 'ref/guide.md' }],
          ['mkdir', { path: 'ref/sub' }],
          ['move', { source: 'ref/guide.md', destination: 'lib/guide.md' }],
          ['copy', { source: 'lib/src', destination: 'ref/src', recursive: true }],
        ] as const) {
          const refused = await call(name, args);
          expect(refused.isError, name).toBe(true);
          expect(refused.text, name).toMatch(/^Error \[(EROFS|EPERM)\]/);
        }
        expect((await call('read_file', { path: 'ref/guide.md' })).text).toContain('# Guide');
        expect((await call('write_file', { path: 'lib/new.ts', content: 'x\n' })).isError).toBe(false);
        expect((await call('copy', { source: 'ref/guide.md', destination: 'lib/guide.md' })).isError).toBe(false);
      } finally {
        await served.client.close();
      }
      expect(await readdir(join(hostDir, 'docs'))).toEqual(['guide.md']);
      for (const text of served.seen) expect(text).not.toContain(hostDir);
    });
  }

  it('refuses at start what a mount table cannot hold, naming the flag and the value (exit 2)', async () => {
    const hostDir = await hostTree();
    const root = join(hostDir, 'root');
    const lib = join(hostDir, 'lib');
    const cases: [string[], string][] = [
      [['--root', root, '--mount', `${lib}:/own.txt`], `--mount ${JSON.stringify(`${lib}:/own.txt`)} shows at own.txt, which --root`],
      [['--root', root, '--mount', `${lib}:/`], 'would cover --root'],
      [['--root', root, '--mount', join(hostDir, 'docs/guide.md')], 'is a file: with --root only directories'],
      [['--mount', `${join(hostDir, 'docs/guide.md')}:ro`], 'a :ro mount must be a directory'],
      [['--root', root, '--mount', lib, '--shell-host'], '--shell-host runs real programs in the root directory'],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['mcp', ...args, '--allow', hostDir]);
      expect(result, args.join(' ')).toMatchObject({ code: 2, stderr: expect.stringContaining(message) });
    }
    expect((await readdir(root)).sort()).toEqual(['own.txt']);
  });

  it('--read-only lists no tool that writes, nor restore; the shell flags are refused with it', async () => {
    const hostDir = await hostTree();
    const served = await serve(['--mount', join(hostDir, 'docs'), '--allow', hostDir, '--read-only']);
    try {
      const names = (await served.client.listTools()).tools.map((tool) => tool.name);
      for (const name of ['write_file', 'edit_file', 'delete', 'mkdir', 'move', 'copy', 'restore', 'snapshot'])
        expect(names, name).not.toContain(name);
      expect(names).toEqual(expect.arrayContaining(['read_file', 'list_directory', 'grep', 'glob', 'stat', 'diff']));
      const refused = await served.call('write_file', { path: 'docs/new.md', content: 'x' });
      expect(refused).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \[EROFS\]: the workspace is read-only/) });
      expect((await served.call('diff', {})).text).toBe('No changes between initial and now.');
      expect(served.client.getInstructions()).not.toContain('`restore');
    } finally {
      await served.client.close();
    }
    for (const shell of ['--shell', '--shell-host'])
      expect(await runCli(['mcp', '--backend', 'host', '--read-only', shell])).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(`--read-only serves no tool that can change files, and ${shell}`),
      });
  });

  it('--patch-out and --write-back targets are checked at start (exit 2, the flag and the value named)', async () => {
    const hostDir = await hostTree();
    const lib = join(hostDir, 'lib');
    const missingDir = join(hostDir, 'missing/dir/p.patch');
    const cases: [string[], string][] = [
      [['--patch-out', missingDir], `--patch-out ${JSON.stringify(missingDir)}: its directory does not exist`],
      [['--patch-out', hostDir], `--patch-out ${JSON.stringify(hostDir)} is a directory`],
      [['--patch-out', join(hostDir, 'docs/guide.md/p.patch')], 'its parent is not a directory'],
      [
        ['--mount', join(hostDir, 'gone'), '--write-back'],
        `--write-back cannot write to the mount ${JSON.stringify(join(hostDir, 'gone'))}: it does not exist`,
      ],
      [['--mount', `${lib}:ro`, '--write-back'], '--write-back has nothing to write to: every --mount is :ro'],
      [
        ['--mount', join(hostDir, 'gone'), '--allow-write-back'],
        `--allow-write-back cannot write to the mount ${JSON.stringify(join(hostDir, 'gone'))}: it does not exist`,
      ],
      [['--allow-write-back'], '--allow-write-back lets the write_back tool write to the mounts: give at least one --mount'],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['mcp', ...args, '--allow', hostDir]);
      expect(result, args.join(' ')).toMatchObject({ code: 2, stderr: expect.stringContaining(message) });
    }
  });
});
