import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../cli/support.js';

interface PackageJson {
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as PackageJson;

describe('package surface', () => {
  it('every export entry has types, import and default, pointing at built files', () => {
    assertBuilt();
    for (const [entry, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue; // ./package.json
      expect(Object.keys(target), entry).toEqual(['types', 'import', 'default']);
      for (const file of Object.values(target)) expect(existsSync(join(REPO, file)), `${entry}: ${file}`).toBe(true);
    }
  });

  it('each adapter is a subpath export whose SDK is an optional peer dependency', () => {
    for (const [subpath, sdk] of [
      ['./ai-sdk', 'ai'],
      ['./openai', 'openai'],
      ['./anthropic', '@anthropic-ai/sdk'],
      ['./langchain', '@langchain/core'],
      ['./deepagents', 'deepagents'],
      ['./claude-agent-sdk', '@anthropic-ai/claude-agent-sdk'],
      ['./openai-agents', '@openai/agents'],
    ] as const) {
      expect(pkg.exports, subpath).toHaveProperty([subpath]);
      expect(pkg.peerDependencies?.[sdk], sdk).toBeDefined();
      expect(pkg.peerDependenciesMeta?.[sdk]?.optional, sdk).toBe(true);
      expect(pkg.dependencies, sdk).not.toHaveProperty([sdk]);
    }
  });

  it("zod 4 is a required peer dependency: tool schemas are the application's own zod", () => {
    expect(pkg.peerDependencies?.zod).toBe('^4.0.0');
    expect(pkg.peerDependenciesMeta?.zod?.optional).not.toBe(true);
    expect(pkg.dependencies).not.toHaveProperty('zod');
  });

  it('the root holds the common case, listed here so that growing it is a decision', async () => {
    const root = await import('../../src/index.js');
    expect(Object.keys(root).sort()).toEqual(
      [
        ...['createWorkspace', 'memoryDriver', 'hostDriver', 'overlayDriver', 'composeDriver', 'hydrate'],
        ...['createSession', 'defineTool', 'workspaceTools', 'workspacePrompt', 'WorkspaceNamespace'],
        ...['WorkspaceError', 'isWorkspaceError', 'AbortError', 'ConflictError', 'CorruptDataError', 'StoreUnavailableError'],
        ...['DirectoryNotEmptyError', 'FileExistsError', 'FileNotFoundError', 'InvalidArgumentError', 'InvalidContentError'],
        ...['InvalidPathError', 'IsADirectoryError', 'LimitExceededError', 'NameTooLongError', 'NotADirectoryError'],
        ...['NotSupportedError', 'PathEscapeError', 'PolicyError', 'QuotaExceededError', 'ReadOnlyError', 'SnapshotError'],
        ...['SnapshotRestoreError', 'TimeoutError'],
      ].sort(),
    );
    expect(Object.keys(root).length).toBeLessThanOrEqual(35);
  });

  it('every subpath in exports resolves to a built module with values, and none repeats the root wholesale', async () => {
    assertBuilt();
    const root = Object.keys((await import(join(REPO, 'dist/src/index.js'))) as object);
    for (const [subpath, target] of Object.entries(pkg.exports as Record<string, string | { import: string }>)) {
      if (subpath === '.' || subpath === './package.json') continue;
      const file = typeof target === 'string' ? target : target.import;
      expect(existsSync(join(REPO, file)), `${subpath} -> ${file}`).toBe(true);
      if (
        ['./s3', './ai-sdk', './openai', './anthropic', './langchain', './deepagents', './claude-agent-sdk', './openai-agents'].includes(
          subpath,
        )
      )
        continue; // optional peers: loading them needs the SDK (tested with each adapter)
      const values = Object.keys((await import(join(REPO, file))) as object);
      expect(values.length, subpath).toBeGreaterThan(0);
      expect(
        values.every((name) => root.includes(name)),
        `${subpath} only repeats the root`,
      ).toBe(false);
    }
  });

  it('keeps memfs out of the runtime dependencies (only a benchmark uses it)', () => {
    expect(pkg.dependencies).not.toHaveProperty('memfs');
  });

  it("require('sessionfs') works where Node supports require(esm)", (context) => {
    assertBuilt();
    const features = process.features as { require_module?: boolean };
    if (features.require_module !== true) {
      console.log(`skipped: Node ${process.version} has no require(esm) (needs 20.19+, 22.12+ or 23+)`);
      context.skip();
    }
    const out = execFileSync(
      process.execPath,
      ['-e', "const m = require('sessionfs'); console.log(typeof m.createSession, typeof require('sessionfs/mcp').createMcpServer)"],
      {
        cwd: REPO,
        encoding: 'utf8',
      },
    );
    expect(out.trim()).toBe('function function');
  });
});
