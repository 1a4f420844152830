import { chmodSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSession, type HydratedSession } from '../../src/session/index.js';
import { ExportConflictError } from '../../src/export/export-plan.js';
import type { HostSource } from '../../src/sources/schema.js';
import { SESSION_BACKENDS, hostTrees } from '../support/backends.js';
import { filesOf } from '../support/host-files.js';

describe.each(SESSION_BACKENDS)('session.writeBack on $name', (backend) => {
  const trees = hostTrees();
  const sessions: HydratedSession[] = [];
  const open = async (sources: HostSource[], allowed: string): Promise<HydratedSession> => {
    const session = await createSession({ backend: backend.session, sources, allowedHostRoots: [allowed] });
    sessions.push(session);
    return session;
  };
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
  });

  it("writes the session's changes back to the mount, then has nothing left to write", async () => {
    const host = trees.tree({ 'a.txt': 'a', 'src/b.ts': 'b', 'src/gone.ts': 'g' });
    const session = await open([{ hostPath: host, path: 'proj' }], host);
    const fs = session.filesystem;
    await fs.write('proj/a.txt', 'A');
    await fs.delete('proj/src/gone.ts');
    await fs.write('proj/src/new dir/c.ts', 'c');
    await fs.write('outside-the-mount.txt', 'never written');
    expect(await session.writeBack()).toEqual({
      written: ['proj/a.txt', 'proj/src/new dir/c.ts'],
      deleted: ['proj/src/gone.ts'],
      conflicts: [],
      dryRun: false,
    });
    expect(filesOf(host)).toEqual({ 'a.txt': 'file 100644 A', 'src/b.ts': 'file 100644 b', 'src/new dir/c.ts': 'file 100644 c' });
    expect(await session.writeBack()).toEqual({ written: [], deleted: [], conflicts: [], dryRun: false });
  });

  it('writes back executable bits and links inside the mount; a link leading out is refused and reported', async () => {
    const host = trees.tree({ 'run.sh': '#!/bin/sh\n', 'a.txt': 'a', 'sub/b.txt': 'b' });
    chmodSync(join(host, 'run.sh'), 0o755);
    const session = await open([{ hostPath: host, path: 'proj' }], host);
    const fs = session.filesystem;
    await fs.setExecutable('proj/run.sh', false);
    await fs.setExecutable('proj/a.txt', true);
    await fs.symlink('../a.txt', 'proj/sub/up-link');
    await fs.symlink('/etc/passwd', 'proj/absolute');
    await fs.symlink('../../outside', 'proj/sub/climbs');
    const refused = [
      { path: 'proj/absolute', reason: 'a symlink to "/etc/passwd" leads out of the destination: an export never creates one' },
      { path: 'proj/sub/climbs', reason: 'a symlink to "../../outside" leads out of the destination: an export never creates one' },
    ];
    const expected = { written: ['proj/a.txt', 'proj/run.sh', 'proj/sub/up-link'], deleted: [], conflicts: [], skipped: refused };
    expect(await session.writeBack({ dryRun: true })).toEqual({ ...expected, dryRun: true });
    expect(await session.writeBack()).toEqual({ ...expected, dryRun: false });
    expect(filesOf(host)).toEqual({
      'a.txt': 'file 100755 a',
      'run.sh': 'file 100644 #!/bin/sh\n',
      'sub/b.txt': 'file 100644 b',
      'sub/up-link': 'link ../a.txt',
    });
    expect(await session.writeBack()).toEqual({ written: [], deleted: [], conflicts: [], skipped: refused, dryRun: false });
  });

  it('never silently overwrites a host file changed since hydration', async () => {
    const host = trees.tree({ 'a.txt': 'a', 'b.txt': 'b' });
    const session = await open([{ hostPath: host, path: 'p' }], host);
    await session.filesystem.write('p/a.txt', 'agent');
    await session.filesystem.write('p/b.txt', 'agent b');
    writeFileSync(join(host, 'a.txt'), 'human');
    const conflicts = [{ path: 'p/a.txt', reason: 'changed at the destination since the baseline' }];
    expect(await session.writeBack({ dryRun: true })).toEqual({ written: ['p/b.txt'], deleted: [], conflicts, dryRun: true });
    await expect(session.writeBack()).rejects.toBeInstanceOf(ExportConflictError);
    expect(filesOf(host)).toEqual({ 'a.txt': 'file 100644 human', 'b.txt': 'file 100644 b' });
    expect(await session.writeBack({ onConflict: 'skip' })).toEqual({ written: ['p/b.txt'], deleted: [], conflicts, dryRun: false });
    // Skipped conflicts are found again; the rest is already there.
    expect(await session.writeBack({ onConflict: 'skip' })).toEqual({ written: [], deleted: [], conflicts, dryRun: false });
    expect(await session.writeBack({ onConflict: 'overwrite' })).toEqual({ written: ['p/a.txt'], deleted: [], conflicts, dryRun: false });
    expect(readFileSync(join(host, 'a.txt'), 'utf8')).toBe('agent');
    expect(await session.writeBack()).toEqual({ written: [], deleted: [], conflicts: [], dryRun: false });
  });

  it('respects readOnly sources, include/exclude and single-file sources', async () => {
    const allowed = trees.dir();
    const docs = trees.tree({ 'guide.md': 'g' }, join(allowed, 'docs'));
    const code = trees.tree({ 'main.ts': 'm', 'notes.txt': 'n', 'build/out.js': 'o' }, join(allowed, 'code'));
    const single = trees.tree({ 'config.json': '{}' }, join(allowed, 'etc'));
    const session = await open(
      [
        { hostPath: docs, path: 'docs', readOnly: true },
        { hostPath: code, path: 'code', include: ['**/*.ts'], exclude: ['build/**', 'build'] },
        { hostPath: join(single, 'config.json'), path: 'config.json' },
      ],
      allowed,
    );
    const fs = session.filesystem;
    await fs.write('docs/guide.md', 'edited');
    await fs.write('code/main.ts', 'M');
    await fs.write('code/extra.txt', 'not included');
    await fs.write('code/build/new.ts', 'excluded');
    await fs.write('config.json', '{"a":1}');
    expect(await session.writeBack()).toEqual({ written: ['code/main.ts', 'config.json'], deleted: [], conflicts: [], dryRun: false });
    expect(readFileSync(join(docs, 'guide.md'), 'utf8')).toBe('g');
    expect(existsSync(join(code, 'extra.txt'))).toBe(false);
    expect(existsSync(join(code, 'build', 'new.ts'))).toBe(false);
    expect(readFileSync(join(code, 'main.ts'), 'utf8')).toBe('M');
    expect(readFileSync(join(single, 'config.json'), 'utf8')).toBe('{"a":1}');
  });

  it('refuses a session without sources (no baseline)', async () => {
    const session = await createSession({ backend: backend.session });
    sessions.push(session);
    await expect(session.writeBack()).rejects.toMatchObject({ code: 'ESNAPSHOT' });
  });
});
