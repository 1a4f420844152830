#!/usr/bin/env node
// `npm run bundle`: the MCP Bundle bundle/sessionfs-<version>.mcpb (one-click install in Claude Desktop and
// other clients that take MCP Bundles) and bundle/server.json (the MCP registry's entry for the npm package).
//
// The bundle is what `npm install` of the packed tarball gives, production dependencies only, with a
// manifest.json whose server runs `sessionfs mcp` on the folder the user picks at install. The official
// tooling (@anthropic-ai/mcpb) validates the manifest and packs the directory.
// Usage: npm run bundle (builds first); node scripts/mcp-bundle.mjs [outDir] to bundle an existing build.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = resolve(process.argv[2] ?? join(root, 'bundle'));
// The package's command (its `bin`, dist/cli/cli.js), next to its main module: its `exports` list neither.
const mcpb = join(dirname(createRequire(import.meta.url).resolve('@anthropic-ai/mcpb')), 'cli', 'cli.js');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const quiet = ['--no-audit', '--no-fund', '--loglevel=error'];

/** The tools the server lists, for the manifest (clients show them before install). */
async function toolList() {
  const { createSession } = await import(pathToFileURL(join(root, 'dist/src/index.js')).href);
  const { createMcpServer } = await import(pathToFileURL(join(root, 'dist/src/entries/mcp.js')).href);
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const session = await createSession({ backend: 'memory' });
  try {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await (await createMcpServer(session)).connect(serverSide);
    const client = new Client({ name: 'mcp-bundle', version: pkg.version });
    await client.connect(clientSide);
    const { tools } = await client.listTools();
    await client.close();
    return tools.map((tool) => ({ name: tool.name, description: tool.description.split('\n')[0] }));
  } finally {
    await session.dispose();
  }
}

function manifest(tools) {
  const entry = 'node_modules/sessionfs/dist/sessionfs.mjs';
  return {
    manifest_version: '0.3',
    name: 'sessionfs',
    display_name: 'sessionfs',
    version: pkg.version,
    description: 'A virtual workspace for the agent: your folder, copied into a session whose failed tool calls are rolled back.',
    long_description: `${pkg.description} The folder you pick is copied into the session (in memory); the agent's edits never touch it.`,
    author: { name: 'sessionfs contributors' },
    license: pkg.license,
    keywords: pkg.keywords,
    server: {
      type: 'node',
      entry_point: entry,
      mcp_config: {
        command: 'node',
        args: [`\${__dirname}/${entry}`, 'mcp', '--mount', '${user_config.project}', '--allow', '${user_config.project}'],
      },
    },
    user_config: {
      project: {
        type: 'directory',
        title: 'Project folder',
        description: 'The folder the agent works on: copied into the session, never written.',
        required: true,
      },
    },
    tools,
    compatibility: { platforms: ['darwin', 'linux', 'win32'], runtimes: { node: pkg.engines.node } },
  };
}

/** The MCP registry entry: the npm package run with npx over stdio (`mcpName` in package.json proves ownership). */
function serverJson() {
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
    name: pkg.mcpName,
    description: 'A virtual workspace per agent session: host folders copied in, failed tool calls rolled back exactly.',
    version: pkg.version,
    packages: [
      {
        registryType: 'npm',
        identifier: pkg.name,
        version: pkg.version,
        runtimeHint: 'npx',
        transport: { type: 'stdio' },
        packageArguments: [
          { type: 'positional', value: 'mcp' },
          { type: 'named', name: '--mount', valueHint: 'project_folder', isRequired: true },
          { type: 'named', name: '--allow', valueHint: 'project_folder', isRequired: true },
        ],
      },
    ],
  };
}

const stage = mkdtempSync(join(tmpdir(), 'sessionfs-mcpb-'));
try {
  execFileSync(npm, ['pack', '--ignore-scripts', '--pack-destination', stage, ...quiet], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = readdirSync(stage).find((name) => name.endsWith('.tgz'));
  const dir = join(stage, 'bundle');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'sessionfs-mcpb', private: true, dependencies: { sessionfs: `file:../${tarball}` } }),
  );
  execFileSync(npm, ['install', '--omit=dev', '--omit=peer', '--omit=optional', '--ignore-scripts', '--prefer-offline', ...quiet], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  rmSync(join(dir, 'package-lock.json'));
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest(await toolList()), null, 2)}\n`);
  execFileSync(process.execPath, [mcpb, 'validate', join(dir, 'manifest.json')], { stdio: ['ignore', 'ignore', 'inherit'] });
  mkdirSync(out, { recursive: true });
  const file = join(out, `sessionfs-${pkg.version}.mcpb`);
  execFileSync(process.execPath, [mcpb, 'pack', dir, file], { stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(join(out, 'server.json'), `${JSON.stringify(serverJson(), null, 2)}\n`);
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  console.log(`${file}\n  sha256 ${sha256}\n${join(out, 'server.json')}`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
