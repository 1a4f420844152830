import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { composeDriver, createWorkspace, overlayDriver, type ManagedWorkspace } from '../../src/index.js';
import { expectError } from '../../src/testing/harness.js';
import { scratch } from '../host/support.js';

/**
 * Cross-mount attacks: two host directories mounted side by side, the public one read-write (a host
 * workspace, or an overlay over the directory) and the private one disabled (or read-only). Whatever a
 * hostile caller plants or names, nothing of the other mount's store is read, written or revealed, and no
 * host path appears in an error.
 */
describe.each(['host', 'overlay'] as const)('composeDriver: attacks across mounts (public mount: %s)', (kind) => {
  const { workspace, dir } = scratch();
  const composed: ManagedWorkspace[] = [];
  afterEach(async () => {
    for (const ws of composed.splice(0)) if (kind === 'overlay') await ws.dispose();
  });

  /** The public mount: a host directory (`root`) shown by a host workspace or an overlay. */
  function publicMount(): { root: string; mounted: ManagedWorkspace } {
    if (kind === 'host') {
      const host = workspace();
      return { root: host.root, mounted: host };
    }
    const root = dir('sessionfs-lower-');
    return { root, mounted: createWorkspace(overlayDriver({ lower: root, allowedHostRoots: [root] })) };
  }

  function setup(privateAccess: 'disabled' | 'read-only') {
    const { root, mounted } = publicMount();
    const open = { root };
    const closed = workspace();
    fs.writeFileSync(join(closed.root, 'secret.txt'), 'top secret\n');
    fs.writeFileSync(join(open.root, 'public.txt'), 'hello\n');
    const ws = createWorkspace(
      composeDriver({
        mounts: [
          { path: '/', workspace: mounted, access: 'read-write' },
          { path: '/vault', workspace: closed, access: privateAccess },
          { path: '/scratch', access: 'read-write' },
        ],
      }),
    );
    composed.push(ws);
    return { ws, open, closed, hostPaths: [open.root, closed.root] };
  }

  it('never climbs out of a mount through ..', async () => {
    const { ws, hostPaths } = setup('disabled');
    await expectError(ws.read('../vault/secret.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.read('docs/../../secret.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    // `..` is resolved in the composed tree first, so it can only land on a path the table routes.
    await expectError(ws.read('public/../vault/secret.txt'), 'FileNotFoundError', 'ENOENT', { hostPaths });
    await expectError(ws.write('x/../vault/planted.txt', 'x'), 'FileNotFoundError', 'ENOENT', { hostPaths });
  });

  it('refuses a link in one mount pointing into another mount’s store', async () => {
    const { ws, open, closed, hostPaths } = setup('disabled');
    fs.symlinkSync(join(closed.root, 'secret.txt'), join(open.root, 'leak'));
    fs.symlinkSync(closed.root, join(open.root, 'leakdir'));
    fs.symlinkSync(join('..', basename(closed.root)), join(open.root, 'relative'));
    await expectError(ws.read('leak'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('leak', 'pwned'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.list('leakdir'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.read('leakdir/secret.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.read('relative/secret.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    // Copying a link within a mount copies the link, which still leads nowhere it may go.
    await ws.copy('leak', 'copied.txt');
    await expectError(ws.read('copied.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(
      ws.copy('leakdir', 'vault-copy', { recursive: true }).then(() => ws.read('vault-copy/secret.txt')),
      'PathEscapeError',
      'EACCES',
      { hostPaths },
    );
    // Across mounts a link is copied as a link (its target text), never followed: it leads nowhere there either.
    await ws.copy('leak', 'scratch/leak');
    await ws.rename('relative', 'scratch/relative');
    expect((await ws.list('scratch')).map((entry) => [entry.name, entry.isSymlink])).toEqual([
      ['leak', true],
      ['relative', true],
    ]);
    await expectError(ws.read('scratch/leak'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.read('scratch/relative/secret.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await ws.grep('top secret')).toEqual([]);
    expect(fs.readFileSync(join(closed.root, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('hides a disabled mount from every listing and search, links to it included', async () => {
    const { ws, open, hostPaths } = setup('disabled');
    fs.mkdirSync(join(open.root, 'vault'));
    fs.writeFileSync(join(open.root, 'vault', 'shadowed.txt'), 'shadowed\n');
    expect((await ws.list('/')).map((e) => e.name)).toEqual(['public.txt', 'scratch']);
    expect((await ws.glob('**', { dot: true })).map((m) => m.path)).toEqual(['public.txt']);
    expect(await ws.grep('secret|shadowed')).toEqual([]);
    await expectError(ws.read('vault/shadowed.txt'), 'FileNotFoundError', 'ENOENT', { hostPaths });
  });

  it('leaves a read-only mount’s store untouched whatever the operation', async () => {
    const { ws, closed, hostPaths } = setup('read-only');
    expect((await ws.read('vault/secret.txt')).content).toBe('top secret');
    await expectError(ws.write('vault/secret.txt', 'pwned'), 'ReadOnlyError', 'EROFS', { hostPaths });
    await expectError(ws.write('vault/../vault/new.txt', 'pwned'), 'ReadOnlyError', 'EROFS', { hostPaths });
    await expectError(ws.rename('public.txt', 'vault/secret.txt', { overwrite: true }), 'ReadOnlyError', 'EROFS', { hostPaths });
    await expectError(ws.delete('vault/secret.txt'), 'ReadOnlyError', 'EROFS', { hostPaths });
    await expectError(ws.delete('vault', { recursive: true }), 'PolicyError', 'EPERM', { hostPaths });
    expect(fs.readdirSync(closed.root).filter((name) => !name.startsWith('.'))).toEqual(['secret.txt']);
    expect(fs.readFileSync(join(closed.root, 'secret.txt'), 'utf8')).toBe('top secret\n');
    expect(await ws.exists('public.txt')).toBe(true);
  });
});
