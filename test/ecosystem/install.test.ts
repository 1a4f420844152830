import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../cli/support.js';

const exec = promisify(execFile);
// npm and npx take what the cache holds (the registry is asked only for what it lacks).
const ENV = {
  ...process.env,
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};
const run = (command: string, args: string[], options: { cwd?: string; timeout?: number } = {}) =>
  exec(command, args, { ...options, env: ENV });
const QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];
const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string; name: string; mcpName: string };
const readme = await readFile(join(REPO, 'README.md'), 'utf8');
const TARBALL = `./sessionfs-${pkg.version}.tgz`;

/** The README's one-line command in the row starting `start`, as written (the tarball path as `./sessionfs-<version>.tgz`). */
function readmeLine(start: string): string {
  const match = readme.match(new RegExp(`\`(${start}[^\`]*)\``));
  if (match === null) throw new Error(`README has no \`${start}…\` line`);
  return match[1]!;
}

/** The quick start block as pasted: the first ```ts block after "## Quick start". */
function quickStart(): string {
  const section = readme.slice(readme.indexOf('## Quick start'));
  const match = section.match(/```ts\n([\s\S]*?)\n```/);
  if (match === null) throw new Error('README has no quick start block');
  return `${match[1]!}\n`;
}

/** `npm init -y`, then the README's install line, in `dir` (which holds the packed tarball). */
async function project(dir: string, type?: 'module'): Promise<void> {
  await run('npm', ['init', '-y', ...QUIET], { cwd: dir });
  if (type !== undefined) await run('npm', ['pkg', 'set', `type=${type}`], { cwd: dir });
  const [command, ...args] = readmeLine('npm install ').split(' ');
  await run(command!, [...args, '--prefer-offline', ...QUIET], { cwd: dir, timeout: 300_000 });
}

/** A project that has zod 3: what `npm install <tarball>` says, then what loading sessionfs says when forced in. */
async function zod3Project(dir: string): Promise<{ refused: string; loaded: string }> {
  await run('npm', ['init', '-y', ...QUIET], { cwd: dir });
  const refused = await run('npm', ['install', 'zod@3', TARBALL, ...QUIET], { cwd: dir, timeout: 180_000 }).then(
    () => '',
    (error: { stderr: string }) => error.stderr,
  );
  await run('npm', ['install', 'zod@3', TARBALL, '--legacy-peer-deps', ...QUIET], { cwd: dir, timeout: 300_000 });
  await writeFile(join(dir, 'load.mjs'), "await import('sessionfs').catch((error) => console.log(error.code, error.message));\n");
  const { stdout } = await run(process.execPath, ['load.mjs'], { cwd: dir });
  return { refused, loaded: stdout.trim() };
}

/** Settles like `promise` when awaited, and never counts as an unhandled rejection while it waits. */
function later<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * What a new user does, from the tarball `npm pack` makes: install it in a fresh `npm init -y` project
 * (CommonJS by default, and ESM), run the README's quick start as pasted, serve MCP with `npx <tarball>`.
 */
describe('the packed tarball in a fresh project; npm run bundle', () => {
  let base: string;
  const projects: Record<'cjs' | 'esm' | 'zod3', string> = { cjs: '', esm: '', zod3: '' };
  // The slow steps start together; each test waits for its own.
  let zod3: Promise<{ refused: string; loaded: string }>;
  let bundled: Promise<string>;

  beforeAll(async () => {
    assertBuilt();
    base = await mkdtemp(join(tmpdir(), 'sessionfs-install-'));
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', base, ...QUIET], { cwd: REPO });
    for (const kind of ['cjs', 'esm', 'zod3'] as const) {
      projects[kind] = join(base, kind);
      await mkdir(projects[kind]);
      await run('cp', [join(base, TARBALL), projects[kind]]);
    }
    const out = join(base, 'bundle');
    bundled = later(run(process.execPath, ['scripts/mcp-bundle.mjs', out], { cwd: REPO, timeout: 400_000 }).then(() => out));
    zod3 = later(zod3Project(projects.zod3));
    await project(projects.cjs);
    // The ESM project gets the same install line; the CommonJS one's node_modules (a copy) makes it quick.
    await run('cp', ['-a', join(projects.cjs, 'node_modules'), projects.esm]);
    await project(projects.esm, 'module');
  }, 420_000);
  afterAll(async () => {
    if (base !== undefined) await rm(base, { recursive: true, force: true });
  });

  it('npm init -y gives a CommonJS project, where the quick start runs as pasted (quickstart.mjs)', async () => {
    const manifest = JSON.parse(await readFile(join(projects.cjs, 'package.json'), 'utf8')) as { type?: string };
    expect(manifest.type ?? 'commonjs').toBe('commonjs');
    expect(manifest).toMatchObject({ dependencies: { sessionfs: expect.stringContaining('.tgz'), zod: expect.stringMatching(/^\^4\./) } });
    await writeFile(join(projects.cjs, 'quickstart.mjs'), quickStart());
    const { stdout } = await run(process.execPath, ['quickstart.mjs'], { cwd: projects.cjs, timeout: 30_000 });
    expect(stdout).toContain('read_file, write_file, edit_file');
    expect(stdout).toContain('true ETOOL');
    expect(stdout).toContain('unknown parameter "force"; allowed: version');
  });

  it('in an ESM project ("type": "module") it runs as quickstart.js too', async () => {
    await writeFile(join(projects.esm, 'quickstart.js'), quickStart());
    const { stdout } = await run(process.execPath, ['quickstart.js'], { cwd: projects.esm, timeout: 30_000 });
    expect(stdout).toContain('true ETOOL');
  });

  it("require('sessionfs') works from CommonJS where Node has require(esm)", async (context) => {
    if ((process.features as { require_module?: boolean }).require_module !== true) context.skip();
    const { stdout } = await run(process.execPath, ['-e', "console.log(typeof require('sessionfs').createSession)"], { cwd: projects.cjs });
    expect(stdout.trim()).toBe('function');
  });

  it('with zod 3 installed, npm refuses the tarball naming the zod 4 peer; forced past that, loading says zod 4 is needed', async () => {
    const { refused, loaded } = await zod3;
    expect(refused).toContain('peer zod@"^4.0.0" from sessionfs');
    expect(loaded).toBe('ENOTSUP sessionfs needs zod 4, and the "zod" installed here is zod 3: npm install zod@4');
  }, 360_000);

  it('npx <tarball> mcp serves: --help, then a real session over stdio', async () => {
    const [npx, ...args] = readmeLine('npx -y ').split(' ');
    expect(args.slice(0, 3)).toEqual(['-y', TARBALL, 'mcp']);
    const { stdout } = await run(npx!, ['-y', TARBALL, 'mcp', '--help'], { cwd: projects.cjs, timeout: 300_000 });
    expect(stdout).toMatch(/^Usage: sessionfs mcp/);

    const folder = join(projects.cjs, 'my-project');
    await mkdir(folder);
    await writeFile(join(folder, 'hello.txt'), 'hello from the host\n');
    const transport = new StdioClientTransport({
      command: npx!,
      args: ['-y', TARBALL, 'mcp', '--mount', './my-project', '--allow', '.'],
      cwd: projects.cjs,
      env: ENV as Record<string, string>,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'install-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'my-project/hello.txt' } });
      expect(JSON.stringify(read.content)).toContain('hello from the host');
    } finally {
      await client.close();
    }
  }, 360_000);
  it('builds an MCP Bundle the official tool validates and whose server runs, and a server.json for the registry', async () => {
    const out = await bundled;
    const mcpb = join(REPO, 'node_modules/@anthropic-ai/mcpb/dist/cli/cli.js');
    const file = join(out, `sessionfs-${pkg.version}.mcpb`);
    await run(process.execPath, [mcpb, 'unpack', file, join(out, 'unpacked')]);
    const validated = await run(process.execPath, [mcpb, 'validate', join(out, 'unpacked', 'manifest.json')]);
    expect(validated.stdout).toMatch(/valid/i);

    const manifest = JSON.parse(await readFile(join(out, 'unpacked', 'manifest.json'), 'utf8')) as {
      server: { mcp_config: { command: string; args: string[] } };
      tools: { name: string }[];
    };
    expect(manifest.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'edit_file', 'snapshot', 'restore', 'diff']));
    // Start the server as a client would: ${__dirname} is the unpacked bundle, the user picked `folder`.
    const folder = join(out, 'picked');
    await mkdir(folder);
    await writeFile(join(folder, 'notes.md'), '# notes\n');
    const args = manifest.server.mcp_config.args.map((arg) =>
      arg.replace('${__dirname}', join(out, 'unpacked')).replace('${user_config.project}', folder),
    );
    const client = new Client({ name: 'bundle-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
    try {
      const listing = await client.callTool({ name: 'list_directory', arguments: { path: 'picked' } });
      expect(JSON.stringify(listing.content)).toContain('notes.md');
    } finally {
      await client.close();
    }

    const server = JSON.parse(await readFile(join(out, 'server.json'), 'utf8')) as Record<string, unknown>;
    expect(server).toMatchObject({
      $schema: expect.stringMatching(/^https:\/\/static\.modelcontextprotocol\.io\/schemas\/[\d-]+\/server\.schema\.json$/),
      name: pkg.mcpName,
      version: pkg.version,
      packages: [{ registryType: 'npm', identifier: pkg.name, version: pkg.version, transport: { type: 'stdio' } }],
    });
    expect(pkg.mcpName).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
  }, 420_000);
});
