import * as fs from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { createSession } from '../../src/session/create-session.js';
import { tempDirs } from '../../src/testing/harness.js';
import { sandboxAvailable, processesNamed } from './support.js';

const available = await sandboxAvailable();
const scratch = tempDirs();

/** Where sessions run: a memory workspace (mirror below) and a host one (its root below). */
const KINDS = ['memory', 'host'] as const;

describe.skipIf(!available)('nothing a program does reaches outside its sandbox', () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      connections += 1;
      socket.end('hello from the host\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const kind of KINDS) {
    describe(kind, () => {
      const open = () => createSession({ backend: kind });

      it('cannot read /etc/shadow or a host temp file by its absolute path', async () => {
        const secretDir = scratch();
        fs.writeFileSync(join(secretDir, 'secret.txt'), 'TOP-SECRET');
        await using session = await open();
        const result = await session.exec(`cat /etc/shadow; cat ${join(secretDir, 'secret.txt')}; ls ${tmpdir()}`);
        expect(result.stdout).not.toContain('TOP-SECRET');
        expect(result.stdout).not.toContain('root:');
        expect(result.stderr).toMatch(/No such file or directory/);
      });

      it('cannot write the system directories', async () => {
        await using session = await open();
        const result = await session.exec('touch /usr/sessionfs-escape; echo $?');
        expect(result.stdout.trim()).not.toBe('0');
        expect(fs.existsSync('/usr/sessionfs-escape')).toBe(false);
      });

      it('has no network unless the orchestrator gives it, and then has the host network', async () => {
        await using session = await open();
        const connect = `node -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => process.stdout.write(d)).on('error', (e) => console.log('refused', e.code))"`;
        const before = connections;
        const closed = await session.exec(connect);
        expect(closed.stdout).toMatch(/^refused/);
        expect(connections).toBe(before);
        const open_ = await session.exec(connect, { network: 'host' });
        expect(open_.stdout).toBe('hello from the host\n');
      });

      it('sees only its own processes in /proc', async () => {
        await using session = await open();
        const result = await session.exec('ls /proc | grep -c "^[0-9]"; cat /proc/[0-9]*/cmdline | tr "\\0" " "');
        const [count] = result.stdout.split('\n');
        expect(Number(count)).toBeLessThanOrEqual(5);
        expect(result.stdout).not.toMatch(/vitest|node\b.*worker/);
        expect(fs.existsSync(`/proc/${process.pid}`)).toBe(true);
      });

      it('leaves no process behind: a setsid daemon dies with the call', async () => {
        await using session = await open();
        const mark = `sessionfs-daemon-${process.pid}-${kind}`;
        const result = await session.exec(
          `setsid bash -c 'exec -a ${mark} sleep 1000' </dev/null >/dev/null 2>&1 & sleep 0.3; grep -l '^${mark}' /proc/[0-9]*/cmdline | wc -l`,
        );
        // It ran (the sandbox saw it), and once the call returned it was gone.
        expect(result.stdout.trim()).toBe('1');
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(processesNamed(mark)).toEqual([]);
      });

      it('shows no host path in pwd, $HOME or an error', async () => {
        await using session = await open();
        await session.filesystem.write('sub/file.txt', 'x');
        const result = await session.exec(
          'pwd; echo $HOME; cd sub && pwd; cat /nope; ls missing; node -e "console.log(process.cwd()); require(\'./nope\')"',
          {
            cwd: 'sub',
          },
        );
        expect(result.stdout).toContain('/workspace/sub');
        expect(result.stdout).toContain('/tmp\n');
        const text = result.stdout + result.stderr;
        expect(text).not.toContain(tmpdir() === '/tmp' ? '/tmp/sessionfs' : tmpdir());
        if (kind === 'host') expect(text).not.toContain(session.filesystem.root);
      });

      it('a deadline kills everything and applies nothing', async () => {
        await using session = await open();
        const started = Date.now();
        await expect(session.exec('echo x > made.txt; sleep 30', { timeoutMs: 500 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(await session.filesystem.exists('made.txt')).toBe(false);
      });

      it('an abort kills everything and applies nothing', async () => {
        await using session = await open();
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 300);
        await expect(session.exec('echo x > made.txt; sleep 30', { signal: controller.signal })).rejects.toMatchObject({
          code: 'ABORT_ERR',
        });
        expect(await session.filesystem.exists('made.txt')).toBe(false);
      });

      it('a policy-denied write fails the call with nothing applied', async () => {
        await using session = await createSession({ backend: kind, policy: { deny: ['secret/**'] } });
        await session.filesystem.write('keep.txt', 'before');
        await expect(session.exec('echo after > keep.txt; echo new > ok.txt; mkdir secret; echo x > secret/key')).rejects.toMatchObject({
          code: 'EPERM',
        });
        expect(await session.filesystem.exists('ok.txt')).toBe(false);
        expect((await session.filesystem.read('keep.txt')).content).toBe('before');
      });
    });
  }

  it('a symlink planted in a host workspace pointing out leads nowhere', async () => {
    const secretDir = scratch();
    fs.writeFileSync(join(secretDir, 'secret.txt'), 'TOP-SECRET');
    const root = scratch();
    fs.symlinkSync(secretDir, join(root, 'leak'));
    fs.symlinkSync('/etc', join(root, 'etc-link'));
    await using session = await createSession({ workspace: createWorkspace(hostDriver({ root })) });
    const result = await session.exec('cat leak/secret.txt; cat etc-link/shadow; ls etc-link/');
    expect(result.stdout).not.toContain('TOP-SECRET');
    expect(result.stdout).not.toContain('shadow');
  });

  it(".git/config of a host-provided repository cannot be changed, and the call's other changes are not applied", async () => {
    const root = scratch();
    execFileSync('git', ['init', '-q', root]);
    const config = fs.readFileSync(join(root, '.git/config'), 'utf8');
    await using session = await createSession({ workspace: createWorkspace(hostDriver({ root })) });
    await expect(session.exec('echo other > other.txt; printf "[core]\\n\\tfsmonitor = evil\\n" >> .git/config')).rejects.toMatchObject({
      code: 'EPERM',
    });
    expect(fs.readFileSync(join(root, '.git/config'), 'utf8')).toBe(config);
    expect(fs.existsSync(join(root, 'other.txt'))).toBe(false);
  });

  it('paths a policy denies by name are hidden from programs too: an empty directory or file stands in their place', async () => {
    const root = scratch();
    fs.mkdirSync(join(root, 'secret/deep'), { recursive: true });
    fs.writeFileSync(join(root, 'secret/deep/key.txt'), 'TOP-SECRET-DIR');
    fs.mkdirSync(join(root, 'config'));
    fs.writeFileSync(join(root, 'config/Key.PEM'), 'TOP-SECRET-FILE');
    fs.writeFileSync(join(root, 'config/app.json'), '{}');
    await using session = await createSession({
      workspace: createWorkspace(hostDriver({ root }), {
        policy: { deny: ['secret/**', 'secret/deep/key.txt', 'config/key.pem', '**/*.env'] },
      }),
    });
    const result = await session.exec(
      'cat secret/deep/key.txt config/Key.PEM; ls -A secret; wc -c < config/Key.PEM; cat config/app.json; echo made > out.txt',
    );
    expect(result.stdout + result.stderr).not.toContain('TOP-SECRET');
    expect(result.stdout).toContain('0\n{}');
    // Nothing of the stand-ins comes back as a change, and what the program did elsewhere is applied.
    expect(result.changed).toEqual({ created: ['out.txt'], modified: [], deleted: [] });
    expect(fs.readFileSync(join(root, 'secret/deep/key.txt'), 'utf8')).toBe('TOP-SECRET-DIR');
    // The stand-in is read-only: a write there fails in the program, and nothing reaches the workspace.
    const write = await session.exec('echo x > secret/new.txt; echo $?');
    expect(write.stdout.trim()).not.toBe('0');
    expect(fs.existsSync(join(root, 'secret/new.txt'))).toBe(false);
  });

  it('a host root whose path holds , and : (overlay option separators) runs', async () => {
    const root = join(scratch(), 'a,b:c');
    fs.mkdirSync(root);
    fs.writeFileSync(join(root, 'in.txt'), 'in');
    await using session = await createSession({ workspace: createWorkspace(hostDriver({ root })) });
    const result = await session.exec('cat in.txt; echo out > out.txt');
    expect(result).toMatchObject({ exitCode: 0, stdout: 'in', changed: { created: ['out.txt'] } });
    expect(fs.readFileSync(join(root, 'out.txt'), 'utf8')).toBe('out\n');
  });

  it('a host workspace root is never written by the program itself: a refused change never touched it', async () => {
    const root = scratch();
    fs.writeFileSync(join(root, 'a.txt'), 'a');
    await using session = await createSession({ workspace: createWorkspace(hostDriver({ root }), { policy: { deny: ['locked/**'] } }) });
    await expect(session.exec('rm a.txt; mkdir locked; echo x > locked/f')).rejects.toMatchObject({ code: 'EPERM' });
    expect(fs.readdirSync(root).filter((name) => !name.startsWith('.'))).toEqual(['a.txt']);
  });

  it('limits: output is cut at maxOutputBytes, a file past the size limit and CPU past its limit fail the call', async () => {
    await using session = await createSession({ backend: 'memory', exec: { limits: { fileBytes: 1024 * 1024, cpuSeconds: 1 } } });
    const loud = await session.exec("head -c 100000 /dev/zero | tr '\\0' a", { maxOutputBytes: 100 });
    expect(loud.truncated).toBe(true);
    expect(loud.stdout).toBe('a'.repeat(100));
    await expect(session.exec('echo y > small.txt; head -c 2000000 /dev/zero > big.bin')).rejects.toMatchObject({ code: 'EFBIG' });
    expect(await session.filesystem.exists('small.txt')).toBe(false);
    await expect(session.exec('while :; do :; done', { timeoutMs: 20_000 })).rejects.toMatchObject({ code: 'EFBIG' });
  });

  it('limits: a file size limit that is not a whole KiB still refuses a file of that size or more, and takes one below it', async () => {
    await using session = await createSession({ backend: 'memory', exec: { limits: { fileBytes: 1000 } } });
    await expect(session.exec('head -c 1010 /dev/zero > a.bin')).rejects.toMatchObject({ code: 'EFBIG' });
    await expect(session.exec('head -c 5000 /dev/zero > b.bin')).rejects.toMatchObject({ code: 'EFBIG' });
    await session.exec('head -c 999 /dev/zero > c.bin');
    expect((await session.filesystem.readBytes('c.bin')).sizeBytes).toBe(999);
  });

  it('limits: the number of processes is capped', async () => {
    await using session = await createSession({ backend: 'memory', exec: { limits: { processes: 100 } } });
    const result = await session.exec('for i in $(seq 1000); do sleep 5 & done 2>/dev/null; ls /proc | grep -c "^[0-9]"', {
      timeoutMs: 60_000,
    });
    expect(Number(result.stdout.trim())).toBeLessThan(1000);
    expect(Number(result.stdout.trim())).toBeLessThanOrEqual(401);
  });

  it('without an engine that can run, exec fails with NotSupportedError naming what to install, and runs nothing', async () => {
    const { bwrapEngine } = await import('../../src/programs/bwrap-engine.js');
    await using session = await createSession({
      workspace: createWorkspace(memoryDriver()),
      exec: { engine: bwrapEngine({ bwrapPath: '/nonexistent/bwrap' }) },
    });
    await expect(session.exec('echo hi > f.txt')).rejects.toMatchObject({
      code: 'ENOTSUP',
      message: expect.stringContaining('bubblewrap'),
    });
    expect(await session.filesystem.exists('f.txt')).toBe(false);
  });
});
