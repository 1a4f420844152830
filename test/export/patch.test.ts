import { chmodSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../../src/workspace/types.js';
import { BACKENDS } from '../support/backends.js';
import { op, protocolFiles, run } from './edits.js';
import { tempDirs } from '../../src/testing/harness.js';
import { filesOf, gitApply } from '../support/host-files.js';
import { gitRepo, materialize } from './support.js';
import { type ManagedWorkspace, createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

// The kv example has no snapshots of its own: it runs on the shared layer's content-addressed snapshotter.
const PATCH_BACKENDS = BACKENDS.filter((entry) => ['memory', 'host', 'kv (third-party driver)'].includes(entry.name)).map((entry) => ({
  ...entry,
  host: entry.name === 'host',
  create: () => entry.open(),
}));

describe.each(PATCH_BACKENDS)('patch on $name', (backend) => {
  const tempDir = tempDirs();
  const liveFiles = (workspace: SnapshotableWorkspace) => (backend.host ? filesOf(workspace.root) : protocolFiles(workspace));

  it('applies with `git apply --binary` to the from tree and gives exactly the to tree (random edits)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op(backend.fileKinds !== false), { maxLength: 12 }),
        fc.array(op(backend.fileKinds !== false), { minLength: 1, maxLength: 12 }),
        async (before, after) => {
          const workspace = backend.create();
          try {
            await run(workspace, before);
            const from = await workspace.snapshot();
            const fromFiles = await liveFiles(workspace);
            await run(workspace, after);
            const patch = await workspace.patch(from);
            const to = await workspace.snapshot();
            expect(await workspace.patch(from, to)).toBe(patch);

            const repo = tempDir();
            await materialize(await workspace.snapshotTree(from), repo);
            expect(filesOf(repo)).toEqual(fromFiles);
            await gitRepo(repo);
            await gitApply(repo, patch);
            expect(filesOf(repo)).toEqual(await liveFiles(workspace));
          } finally {
            await workspace.dispose();
          }
        },
      ),
      { numRuns: backend.host ? 25 : 50 },
    );
  }, 120_000);

  it('is empty between equal trees, even after a rewrite with the same bytes', async () => {
    const workspace = backend.create();
    await workspace.write('same.txt', 'one\n');
    const from = await workspace.snapshot();
    await workspace.write('same.txt', 'one\n');
    expect(await workspace.patch(from)).toBe('');
    await workspace.dispose();
  });
});

describe('patch format', () => {
  const tempDir = tempDirs();

  /** Native `git apply` of `patch` onto the `from` tree gives exactly the workspace's live tree. */
  async function expectGitApplies(workspace: ManagedWorkspace, from: WorkspaceSnapshot, patch: string): Promise<void> {
    const repo = tempDir();
    await materialize(await workspace.snapshotTree(from), repo);
    await gitRepo(repo);
    await gitApply(repo, patch);
    expect(filesOf(repo)).toEqual(await protocolFiles(workspace));
  }

  it('matches `git diff --binary` byte for byte on text, modes, links, empty files and quoted names', async () => {
    const workspace = createWorkspace(hostDriver());
    try {
      await workspace.write('keep.txt', 'a\nb\nc\nd\ne\nf\ng\nh\n');
      await workspace.write('gone.txt', 'bye\n');
      await workspace.write('empty-gone', '');
      await workspace.write('mode.sh', 'echo\n');
      symlinkSync('keep.txt', join(workspace.root, 'link'));
      const from = await workspace.snapshot();
      await workspace.write('keep.txt', 'a\nb\nC\nd\ne\nf\ng\nH\nno newline');
      await workspace.delete('gone.txt');
      await workspace.delete('empty-gone');
      await workspace.write('new empty', '');
      await workspace.write('dir/naïve "q".txt', 'x\n');
      chmodSync(join(workspace.root, 'mode.sh'), 0o755);
      await workspace.delete('link');
      symlinkSync('dir', join(workspace.root, 'link'));
      const patch = await workspace.patch(from);

      const repo = tempDir();
      await materialize(await workspace.snapshotTree(from), repo);
      await gitRepo(repo);
      await materialize(await workspace.snapshotTree(), tempDir());
      // Make the repo's worktree the to tree, then ask git for its own patch.
      await execa('git', ['rm', '-rq', '--cached', '.'], { cwd: repo });
      await execa('sh', ['-c', 'find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +'], { cwd: repo });
      await materialize(await workspace.snapshotTree(), repo);
      await execa('git', ['add', '-A'], { cwd: repo });
      const native = await execa('git', ['diff', '--cached', '--binary', '--full-index', '--no-renames', 'HEAD'], {
        cwd: repo,
        stripFinalNewline: false,
      });
      expect(patch).toBe(native.stdout);
    } finally {
      await workspace.dispose();
    }
  });

  it('keeps full context where it sets common lines aside, even when an edit could sit in a run of equal lines', async () => {
    // The `diff` package alone would put the added L after the kept Ls with no context after it, which git
    // applies only at the end of the file; the hunk must carry the Z lines that follow.
    const workspace = createWorkspace(memoryDriver());
    try {
      await workspace.write('runs.txt', 'P1\nP2\nP3\nP4\nc\nL\nL\nL\nZ\nZ\nZ\nZ\nZ\n');
      const from = await workspace.snapshot();
      await workspace.write('runs.txt', 'P1\nP2\nP3\nP4\nL\nL\nL\nL\nZ\nZ\nZ\nZ\nZ\n');
      const patch = await workspace.patch(from);
      expect(patch).toContain('@@ -2,10 +2,10 @@\n P2\n P3\n P4\n-c\n L\n L\n L\n+L\n Z\n Z\n Z\n');
      await expectGitApplies(workspace, from, patch);
    } finally {
      await workspace.dispose();
    }
  });

  it('applies exactly to long texts edited in a few places (common lines set aside), with runs of equal lines', async () => {
    const line = fc.constantFrom('L\n', 'L\n', 'M\n', 'x\r\n', '\n', 'ünï\n');
    const long = fc
      .array(line, { minLength: 0, maxLength: 60 })
      .chain((lines) => fc.boolean().map((cut) => lines.join('') + (cut ? 'end' : '')));
    const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 3 }), add: fc.array(line, { maxLength: 3 }) });
    const file = fc.record({
      text: long,
      edits: fc.array(edit, { minLength: 1, maxLength: 3 }),
      final: fc.constantFrom('keep', 'add', 'drop'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(file, { minLength: 1, maxLength: 8 }), async (files) => {
        const workspace = createWorkspace(memoryDriver());
        try {
          for (const [index, { text }] of files.entries()) await workspace.write(`f${index}.txt`, text);
          const from = await workspace.snapshot();
          for (const [index, { text, edits, final }] of files.entries()) {
            const lines = text.split(/(?<=\n)/);
            for (const { at, remove, add } of edits) lines.splice(at % (lines.length + 1), remove, ...add);
            let edited = lines.join('');
            if (final === 'add' && !edited.endsWith('\n')) edited += '\n';
            if (final === 'drop' && edited.endsWith('\n')) edited = edited.slice(0, -1);
            await workspace.write(`f${index}.txt`, edited);
          }
          const patch = await workspace.patch(from);
          await expectGitApplies(workspace, from, patch);
        } finally {
          await workspace.dispose();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
