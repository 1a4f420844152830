import { chmodSync, lstatSync, symlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HostWorkspace } from '../../src/backends/host/index.js';
import { MemoryWorkspace } from '../../src/backends/memory/index.js';
import { MemoryDriver } from '../../src/backends/memory/driver.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { WorkspaceError } from '../../src/workspace/errors.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { filesOf, gitApply, gitRepo, materialize, tempDirs } from './support.js';

type Op =
  | { op: 'write'; path: string; bytes: Uint8Array }
  | { op: 'delete'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'chmod'; path: string }
  | { op: 'link'; path: string; target: string };

const NAMES = ['a', 'b c', 'é', '日本', 'q"t', 'x.bin'];
const DIRS = ['', 'd/', 'd/e f/'];
const path = fc.tuple(fc.constantFrom(...DIRS), fc.constantFrom(...NAMES)).map(([dir, name]) => `${dir}${name}`);
const text = fc
  .array(fc.tuple(fc.constantFrom('x', 'y', 'z', '', 'ünï'), fc.constantFrom('\n', '\r\n')), { maxLength: 12 })
  .chain((lines) => fc.boolean().map((final) => lines.map(([l, e]) => l + e).join('') + (final ? 'tail' : '')));
const content = fc.oneof(
  text.map((t) => new TextEncoder().encode(t)),
  fc.uint8Array({ maxLength: 200 }).map((b) => Uint8Array.from([0, ...b])),
  fc.constant(new Uint8Array()),
  fc.constant(Uint8Array.from([0x66, 0xff, 0x0a])),
);
const op = (host: boolean): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant('write' as const), path, bytes: content }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), path: fc.oneof(path, fc.constantFrom('d', 'd/e f')) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('rename' as const), from: path, to: path }) },
    ...(host
      ? [
          { weight: 2, arbitrary: fc.record({ op: fc.constant('chmod' as const), path }) },
          {
            weight: 1,
            arbitrary: fc.record({ op: fc.constant('link' as const), path, target: fc.constantFrom('a', '../x', 'd/é', 'b c') }),
          },
        ]
      : []),
  );

async function run(workspace: SnapshotableWorkspace, ops: Op[]): Promise<void> {
  for (const step of ops) {
    try {
      if (step.op === 'write') await workspace.writeBytes(step.path, step.bytes);
      else if (step.op === 'delete') await workspace.delete(step.path, { recursive: true });
      else if (step.op === 'rename') await workspace.rename(step.from, step.to, { overwrite: true });
      else {
        // Outside the protocol: what a shell in a host workspace does.
        const abs = join(workspace.root, step.path);
        if (step.op === 'chmod') {
          if (lstatSync(abs, { throwIfNoEntry: false })?.isFile() === true) chmodSync(abs, statSync(abs).mode & 0o100 ? 0o644 : 0o755);
        } else if (
          lstatSync(abs, { throwIfNoEntry: false }) === undefined &&
          lstatSync(join(abs, '..'), { throwIfNoEntry: false })?.isDirectory() === true
        ) {
          symlinkSync(step.target, abs);
        }
      }
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
    }
  }
}

/** The workspace's files through the protocol (memory and kv have no links or modes). */
async function protocolFiles(workspace: SnapshotableWorkspace, base = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await workspace.list(base)) {
    if (entry.isDirectory) Object.assign(out, await protocolFiles(workspace, entry.path));
    else out[entry.path] = `file 100644 ${Buffer.from((await workspace.readBytes(entry.path)).content).toString('latin1')}`;
  }
  return out;
}

/** The memory driver without its own snapshots: the shared layer's content-addressed snapshotter. */
function blobSnapshotWorkspace(): SnapshotableWorkspace {
  const driver = new MemoryDriver();
  const withoutSnapshots = new Proxy(driver, {
    get: (target, key) => {
      if (key === 'snapshots') return undefined;
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return createWorkspace(withoutSnapshots);
}

const BACKENDS: { name: string; host: boolean; create(): SnapshotableWorkspace }[] = [
  { name: 'memory', host: false, create: () => new MemoryWorkspace() },
  { name: 'host', host: true, create: () => new HostWorkspace() },
  { name: 'default snapshotter', host: false, create: blobSnapshotWorkspace },
];

describe.each(BACKENDS)('patch on $name', (backend) => {
  const tempDir = tempDirs();
  const liveFiles = (workspace: SnapshotableWorkspace) => (backend.host ? filesOf(workspace.root) : protocolFiles(workspace));

  it('applies with `git apply --binary` to the from tree and gives exactly the to tree (random edits)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op(backend.host), { maxLength: 12 }),
        fc.array(op(backend.host), { minLength: 1, maxLength: 12 }),
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

  it('matches `git diff --binary` byte for byte on text, modes, links, empty files and quoted names', async () => {
    const workspace = new HostWorkspace();
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
});
