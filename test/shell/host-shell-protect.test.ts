import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { shellTool } from '../../src/shell/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { hostTrees } from '../support/backends.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';

const trees = hostTrees();

/** A real git repository on the host, as a user's checkout is. */
function repository(): string {
  const root = trees.tree({ 'src/a.ts': 'export const a = 1;\n' });
  execFileSync('git', ['init', '-q', root]);
  return root;
}

const FSMONITOR = (marker: string) => `[core]\n\tfsmonitor = "touch ${marker}; false"\n`;

/** Runs the user's `git status` in `root`, as they would after the session. */
function gitStatus(root: string): void {
  execFileSync('git', ['status', '--porcelain'], { cwd: root, stdio: 'ignore' });
}

describe('the protect rule on a host root (a user checkout)', () => {
  it('refuses an edit_file of .git/config (the fsmonitor attack): the planted command never runs at the next git status', async () => {
    const root = repository();
    const marker = join(trees.dir(), 'pwned');
    const config = readFileSync(join(root, '.git/config'), 'utf8');
    const session = await createSession({ backend: 'host', root });
    await using _ = session;
    const tools = workspaceTools();
    const write = tools.find((tool) => tool.name === 'write_file');
    const edit = tools.find((tool) => tool.name === 'edit_file');
    if (write === undefined || edit === undefined) throw new Error('no write_file or edit_file tool');
    const written = await session.runTool(write, { path: '.git/config', content: FSMONITOR(marker) });
    expect(written).toMatchObject({ success: false, code: 'EPERM' });
    expect(written.message).toContain('**/.git/**');
    await session.runTool(tools.find((tool) => tool.name === 'read_file') ?? write, { path: '.git/config' });
    const edited = await session.runTool(edit, { path: '.git/config', old_string: '[core]', new_string: FSMONITOR(marker) });
    expect(edited).toMatchObject({ success: false, code: 'EPERM' });
    expect(readFileSync(join(root, '.git/config'), 'utf8')).toBe(config);
    gitStatus(root);
    expect(existsSync(marker)).toBe(false);
  });

  it('fails a host shell command that writes .git/config or a hook, and puts the host files back exactly', async () => {
    const root = repository();
    const marker = join(trees.dir(), 'pwned');
    const config = readFileSync(join(root, '.git/config'), 'utf8');
    const session = await createSession({ backend: 'host', root });
    await using _ = session;
    const bash = shellTool({ mode: 'host' });
    for (const command of [
      `echo x > other.txt; printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n' >> .git/config`,
      `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout`,
      `git config core.fsmonitor "touch ${marker}; false"`,
      'rm .git/config',
      'rm -rf .git && git init -q --initial-branch=elsewhere .',
    ]) {
      const result = await session.runTool(bash, { command });
      expect(result, command).toMatchObject({ success: false, code: 'EPERM' });
      expect(result.message, command).toContain("protect rule '**/.git/**'");
      expect(readFileSync(join(root, '.git/config'), 'utf8'), command).toBe(config);
      expect(existsSync(join(root, '.git/hooks/post-checkout')), command).toBe(false);
      expect(existsSync(join(root, 'other.txt')), command).toBe(false);
    }
    gitStatus(root);
    expect(existsSync(marker)).toBe(false);
    // Reading it is fine.
    const read = await session.runTool(bash, { command: 'git status --porcelain; cat .git/HEAD' });
    expect(read).toMatchObject({ success: true });
  });

  it('lets a command create a repository of its own (git init) and work in it, as ordinary content', async () => {
    const root = trees.dir();
    const session = await createSession({ backend: 'host', root });
    await using _ = session;
    const bash = shellTool({ mode: 'host' });
    expect(await session.runTool(bash, { command: 'git init -q sub' })).toMatchObject({ success: true });
    expect(await session.runTool(bash, { command: 'git -C sub config user.name model' })).toMatchObject({ success: true });
    await session.filesystem.write('sub/.git/description', 'mine');
    expect(readFileSync(join(root, 'sub/.git/config'), 'utf8')).toContain('name = model');
  });

  it('protect: [] (an orchestrator decision) turns the rule off, and then the attack works: what the rule is for', async () => {
    const root = repository();
    const marker = join(trees.dir(), 'pwned');
    const workspace = createWorkspace(hostDriver({ root }), { protect: [] });
    await using _ = workspace;
    await workspace.write('.git/config', FSMONITOR(marker), { mode: 'append' });
    gitStatus(root);
    expect(existsSync(marker)).toBe(true);
  });
});
