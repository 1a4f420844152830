import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sweepStaleTemp } from '../../src/backends/host/owned-temp.js';
import { createSession } from '../../src/session/create-session.js';
import { defineTool } from '../../src/session/define-tool.js';
import { sandboxAvailable, processesNamed } from './support.js';

const available = await sandboxAvailable();

/** A user's own tool that runs a program in its call, as a `run_tests` tool would. */
const runAndWrite = defineTool({
  name: 'run_and_write',
  description: 'runs a program, then writes a file, then fails when asked to',
  parameters: z.object({ command: z.string(), fail: z.boolean(), timeoutMs: z.number().optional() }),
  handler: async ({ command, fail, timeoutMs }, context) => {
    const result = await context.session.exec(command, timeoutMs === undefined ? {} : { timeoutMs });
    await context.filesystem.write('after.txt', result.stdout);
    return fail ? { success: false, message: 'failed on purpose' } : { success: true, message: result.stdout, value: result.changed };
  },
});

describe.skipIf(!available)('session.exec', () => {
  it('inside a tool call: no deadlock, and the changes belong to the call (kept when it succeeds)', async () => {
    await using session = await createSession({ backend: 'memory' });
    const result = await session.runTool(runAndWrite, { command: 'echo made > made.txt; echo ok', fail: false });
    expect(result).toMatchObject({ success: true, rolledBack: false, value: { created: ['made.txt'], modified: [], deleted: [] } });
    expect(new TextDecoder().decode((await session.filesystem.readBytes('made.txt')).content)).toBe('made\n');
    expect(session.calls).toHaveLength(1);
    await session.rollbackTo(session.snapshots[0]!);
    expect(await session.filesystem.exists('made.txt')).toBe(false);
  });

  it("inside a tool call that fails, the program's changes roll back with it", async () => {
    await using session = await createSession({ backend: 'memory', rollback: 'journal' });
    await session.filesystem.write('kept.txt', 'old');
    const result = await session.runTool(runAndWrite, { command: 'echo new > kept.txt; echo x > made.txt', fail: true });
    expect(result).toMatchObject({ success: false, rolledBack: true });
    expect(await session.filesystem.exists('made.txt')).toBe(false);
    expect((await session.filesystem.read('kept.txt')).content).toBe('old');
  });

  it('a deadline inside a tool call fails the call, rolled back', async () => {
    await using session = await createSession({ backend: 'host' });
    const result = await session.runTool(runAndWrite, { command: 'echo x > made.txt; sleep 30', fail: false, timeoutMs: 300 });
    expect(result).toMatchObject({ success: false, rolledBack: true, code: 'ETIMEDOUT' });
    expect(await session.filesystem.exists('made.txt')).toBe(false);
    expect(await session.filesystem.exists('after.txt')).toBe(false);
  });

  it('from outside, waits for the call asked for before it, and the next run sees the changes (the mirror follows)', async () => {
    await using session = await createSession({ backend: 'memory' });
    const call = session.runTool(runAndWrite, { command: 'sleep 0.3; echo one > one.txt', fail: false });
    const outside = session.exec('cat one.txt; mkdir -p build/empty; echo two > two.txt');
    expect((await outside).stdout).toBe('one\n');
    expect((await call).success).toBe(true);
    await session.filesystem.write('three.txt', '3');
    await session.filesystem.delete('one.txt');
    const next = await session.exec('ls -a; ls build; cat three.txt');
    expect(next.stdout).toBe('.\n..\nafter.txt\nbuild\nthree.txt\ntwo.txt\nempty\n3');
  });

  it('refuses options it does not take, and bad commands, before running anything', async () => {
    await using session = await createSession({ backend: 'memory' });
    await expect(session.exec('true', { shell: 'zsh' } as never)).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(session.exec('')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(session.exec('true', { network: 'all' } as never)).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(session.exec('true', { cwd: 'missing' })).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(createSession({ backend: 'memory', exec: { limits: { files: 3 } } as never })).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('runs an argv without a shell, with stdin and the caller env', async () => {
    await using session = await createSession({ backend: 'memory' });
    const result = await session.exec(['sh', '-c', 'cat; echo " $GREETING"'], { stdin: 'from stdin', env: { GREETING: 'hi' } });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'from stdin hi\n', truncated: false });
    const failed = await session.exec('echo out; echo err >&2; exit 3');
    expect(failed).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('a server killed with kill -9 mid-run leaves no process, and the next start sweeps its directories', { timeout: 30_000 }, async () => {
    const dist = fileURLToPath(new URL('../../dist/src/index.js', import.meta.url));
    const mark = `sessionfs-killed-${process.pid}`;
    const script = `
      const { createSession } = await import(${JSON.stringify(dist)});
      const session = await createSession({ backend: 'memory' });
      await session.filesystem.write('a.txt', 'a');
      process.stdout.write('ready\\n');
      await session.exec("bash -c 'exec -a ${mark} sleep 60'");
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve()));
    const owned = () =>
      fs.readdirSync(tmpdir()).filter((name) => /^sessionfs-(exec|mirror)-/.test(name) && name.includes(`-${child.pid}.`));
    for (let i = 0; i < 100 && processesNamed(mark).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processesNamed(mark)).toHaveLength(1);
    expect(owned().length).toBeGreaterThanOrEqual(2);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    for (let i = 0; i < 40 && processesNamed(mark).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processesNamed(mark)).toEqual([]);
    sweepStaleTemp();
    expect(owned()).toEqual([]);
    expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(`-${child.pid}.`);
  });
});
