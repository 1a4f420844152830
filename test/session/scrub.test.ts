import { describe, expect, it } from 'vitest';
import { scrubHostPaths } from '../../src/session/scrub.js';

describe('scrubHostPaths', () => {
  const root = '/tmp/sessionfs-root-abc';

  it('turns paths under the workspace root into workspace paths', () => {
    expect(scrubHostPaths(`cannot open '${root}/src/a.ts': busy`, { root })).toBe("cannot open '/src/a.ts': busy");
    expect(scrubHostPaths(`${root} is full.`, { root })).toBe('/ is full.');
    // A sibling with the root as a name prefix is not the root.
    expect(scrubHostPaths(`${root}2/x`, { root, allAbsolute: true })).toBe('<path>');
  });

  it('a list of directories changed in place after use is honoured (plans are remembered per list)', () => {
    const hostDirs = ['/srv/one'];
    expect(scrubHostPaths('at /srv/one/a and /srv/two/b', { hostDirs })).toBe('at <host path> and /srv/two/b');
    hostDirs.push('/srv/two');
    expect(scrubHostPaths('at /srv/one/a and /srv/two/b', { hostDirs })).toBe('at <host path> and <host path>');
    expect(scrubHostPaths('at /srv/one/a', { hostDirs, root: '/srv/one' })).toBe('at /a');
  });

  it('hides a directory and one below it, whichever a message names', () => {
    const hostDirs = ['/work/main/sub', '/work/main'];
    expect(scrubHostPaths('at /work/main/x', { hostDirs })).toBe('at <host path>');
    expect(scrubHostPaths('and work/main/sub', { hostDirs })).toBe('and <host path>');
    expect(scrubHostPaths('only /work/main/sub/z', { hostDirs: ['/work/main', '/work/main/sub'] })).toBe('only <host path>');
  });

  it('an entry ending in * hides every path whose name there starts with the text before it', () => {
    const hostDirs = ['/tmp/sessionfs-*'];
    expect(scrubHostPaths('at /tmp/sessionfs-root-1.2.abc-XyZ/src/a.ts and /tmp/sessionfs-/b', { hostDirs })).toBe(
      'at <host path> and <host path>',
    );
    expect(scrubHostPaths('bare tmp/sessionfs-exec-1/x, not tmp/other nor xtmp/sessionfs-1', { hostDirs })).toBe(
      'bare <host path>/x, not tmp/other nor xtmp/sessionfs-1',
    );
    // Only that name: the temp directory itself, and everything else in it, are shown.
    expect(scrubHostPaths('cd /tmp; mktemp gave /tmp/tmp.AbC123 and /tmp/xsessionfs-1', { hostDirs })).toBe(
      'cd /tmp; mktemp gave /tmp/tmp.AbC123 and /tmp/xsessionfs-1',
    );
  });

  it('hides paths under known host directories whole, longest first', () => {
    expect(scrubHostPaths('read /home/me/.ssh/id_rsa and /tmp/git-1/objects', { hostDirs: ['/home/me', '/tmp', '/tmp/git-1'] })).toBe(
      'read <host path> and <host path>',
    );
    expect(scrubHostPaths('see /tmpfoo/x', { hostDirs: ['/tmp'] })).toBe('see /tmpfoo/x');
  });

  it('with allAbsolute, hides every other absolute path but keeps workspace paths from the root', () => {
    const message = `EACCES: permission denied, open '/etc/shadow' (after ${root}/a.txt), file:///srv/x, C:\\Users\\me\\x`;
    expect(scrubHostPaths(message, { root, allAbsolute: true })).toBe(
      "EACCES: permission denied, open '<path>' (after /a.txt), file:<path>, <path>",
    );
    expect(scrubHostPaths('a / b and 1/2', { allAbsolute: true })).toBe('a / b and 1/2');
  });

  it('leaves a workspace path alone when a host directory is only its tail (src/tmp/a.ts with /tmp hidden)', () => {
    // A host directory such as /tmp, /app or /home matched inside `src/tmp/a.ts` mangled every listing,
    // read and error that named such a path (reproduced: `src<host path>`).
    const hostDirs = ['/tmp', '/app'];
    expect(scrubHostPaths('src/tmp/a.txt and web/app/page.tsx', { hostDirs })).toBe('src/tmp/a.txt and web/app/page.tsx');
    expect(scrubHostPaths('see src/tmp/a.txt', { root: '/tmp', hostDirs, allAbsolute: true })).toBe('see src/tmp/a.txt');
    // Longer host directories are hidden wherever they appear, even glued to a flag.
    expect(
      scrubHostPaths('cc -I/tmp/sessionfs-root-x/include -L/tmp/git-1/lib', {
        root: '/tmp/sessionfs-root-x',
        hostDirs: ['/tmp', '/tmp/git-1'],
      }),
    ).toBe('cc -I/include -L<host path>');
    // Real host paths are still hidden, wherever they start.
    expect(scrubHostPaths("open '/tmp/x', /app/y, file:///tmp/z, (/tmp/w:1:2)", { hostDirs })).toBe(
      "open '<host path>', <host path>, file://<host path>, (<host path>)",
    );
  });

  it('hides the slash-less form of a host directory, only as a whole path of two segments or more', () => {
    expect(scrubHostPaths('at /srv/data/x and srv/data/y', { hostDirs: ['/srv/data'] })).toBe('at <host path> and <host path>/y');
    expect(scrubHostPaths('in /tmp/ws/a.ts or tmp/ws/b.ts', { root: '/tmp/ws' })).toBe('in /a.ts or <host path>/b.ts');
    expect(scrubHostPaths('src/a.ts', { root: '/' })).toBe('src/a.ts');
    // `sessionfs mcp --allow /tmp` (or a working directory /app, /data) turned every "tmp" in a file the model
    // read into "<host path>" (reproduced over MCP: `import <host path> from "<host path>"`).
    expect(scrubHostPaths('import tmp from "tmp"; myapp/app.ts', { hostDirs: ['/tmp', '/app'] })).toBe(
      'import tmp from "tmp"; myapp/app.ts',
    );
    expect(scrubHostPaths('in tmp/ws/b.ts, xtmp/ws/c.ts, tmp/ws2/d.ts', { root: '/tmp/ws' })).toBe(
      'in <host path>/b.ts, xtmp/ws/c.ts, tmp/ws2/d.ts',
    );
    expect(scrubHostPaths('"srv/data" and srv/data/y', { hostDirs: ['/srv/data'] })).toBe('"<host path>" and <host path>/y');
  });
});
