import { hostOf } from './support.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isTempName } from '../../src/backends/host/index.js';
import { createSession, createWorkspace, hostDriver } from '../../src/index.js';
import { sweepStaleTemp } from '../../src/entries/host.js';
import { assertBuilt, CLI, REPO } from '../cli/support.js';
import { hostTag as ownHostTag } from '../../src/backends/host/owned-temp.js';
import { tempDirs } from '../../src/testing/harness.js';

// Children run the built package (npm test builds first), each with its own TMPDIR, so these tests never
// see (or sweep) another process's temp directories.
const INDEX = join(REPO, 'dist/src/index.js');
const HOST = join(REPO, 'dist/src/entries/host.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const isolatedTemp = tempDirs({ prefix: 'sessionfs-sweep-test-' });
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Runs `script` (an ES module body with `sessionfs`: the root and `sessionfs/host`) in a child whose TMPDIR is `temp`. */
function child(temp: string, script: string): { process: ChildProcess; output: Promise<string>; exited: Promise<void> } {
  const body = `import * as root from ${JSON.stringify(INDEX)};\nimport * as host from ${JSON.stringify(HOST)};\nconst sessionfs = { ...root, ...host };\n${script}`;
  const started = spawn(process.execPath, ['--input-type=module', '-e', body], {
    env: { ...process.env, TMPDIR: temp },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(started);
  let text = '';
  started.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
  return { process: started, output: exited.then(() => text), exited };
}

/** A child that runs `script`, prints `ready` and then stays (until it is killed), once it has printed it. */
async function runningChild(temp: string, script: string): Promise<ChildProcess> {
  const started = child(temp, `${script}\nconsole.log('ready');\nsetInterval(() => {}, 1000);`);
  await new Promise<void>((resolve, reject) => {
    started.process.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    started.process.once('exit', () => reject(new Error('the child exited early')));
  });
  return started.process;
}

/** A child holding a host workspace with a file in it, until it is killed. */
function workspaceHolder(temp: string): Promise<ChildProcess> {
  return runningChild(
    temp,
    `const ws = sessionfs.createWorkspace(sessionfs.hostDriver());
     await ws.write('project.txt', 'a copy of the project');
     await ws.snapshot();`,
  );
}

async function killed(process: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => process.once('exit', () => resolve()));
  process.kill('SIGKILL');
  await exited;
}

const ownedNames = (temp: string) => readdirSync(temp).filter((name) => name.startsWith('sessionfs-'));
const hostTag = ownHostTag();

describe('temp directories outlive no process', () => {
  it('a kill -9 leaves the root and git dir, and a later sweep removes exactly those', async () => {
    assertBuilt();
    const temp = isolatedTemp();
    const holder = await workspaceHolder(temp);
    const left = ownedNames(temp);
    expect(left.map((name) => name.replace(/-\d.*$/, '')).sort()).toEqual(['sessionfs-git', 'sessionfs-root']);
    // While the owner lives, nothing is swept.
    expect(sweepStaleTemp({ directory: temp }).removed).toEqual([]);
    expect(ownedNames(temp)).toEqual(left);
    await killed(holder);
    expect(ownedNames(temp)).toEqual(left);
    expect(sweepStaleTemp({ directory: temp }).removed.sort()).toEqual([...left].sort());
    expect(readdirSync(temp)).toEqual([]);
  });

  it('the next process that makes a workspace sweeps what a killed one left, and keeps a live one’s', async () => {
    assertBuilt();
    const temp = isolatedTemp();
    const dead = await workspaceHolder(temp);
    const deadNames = ownedNames(temp);
    await killed(dead);
    const alive = await workspaceHolder(temp);
    // A dead directory being swept meanwhile carries the sweeper's claim name (`sessionfs-swept-…`) until removed.
    const aliveNames = ownedNames(temp).filter((name) => !deadNames.includes(name) && !name.startsWith('sessionfs-swept-'));
    expect(aliveNames).toHaveLength(2);
    // The sweep runs just after the first temp directory is made, off the call that made it.
    for (let tries = 0; tries < 200 && ownedNames(temp).length > 2; tries += 1) await sleep(10);
    expect(ownedNames(temp).sort()).toEqual(aliveNames.sort());
    expect(alive.exitCode).toBe(null);
  });

  it('a pid reused by another process does not keep a dead owner’s directory; another host’s and unknown names are kept', () => {
    const temp = isolatedTemp();
    // This test's own pid, with a start time it never had: the owner that made it is gone.
    const reused = `sessionfs-root-${process.pid}.1.${hostTag}-AbC123`;
    const foreignHost = `sessionfs-root-999999.1.${hostTag === 'ffffff' ? '000000' : 'ffffff'}-AbC123`;
    const unknown = ['sessionfs-root-AbC123', 'sessionfs-notes', 'other-999999'];
    for (const name of [reused, foreignHost, ...unknown]) mkdirSync(join(temp, name));
    writeFileSync(join(temp, reused, 'f.txt'), 'x');
    expect(sweepStaleTemp({ directory: temp }).removed).toEqual([reused]);
    expect(readdirSync(temp).sort()).toEqual([foreignHost, ...unknown].sort());
  });

  it('two processes sweeping at once remove each stale directory once and never a live one', async () => {
    assertBuilt();
    const temp = isolatedTemp();
    const alive = await workspaceHolder(temp);
    const aliveNames = ownedNames(temp);
    // 40 stale directories of owners that are gone (the dead pid of a child that has exited).
    const gone = child(temp, 'console.log(process.pid);');
    const deadPid = Number((await gone.output).trim());
    const stale = Array.from({ length: 40 }, (_, i) => `sessionfs-root-${deadPid}.1.${hostTag}-S${String(i).padStart(5, '0')}`);
    for (const name of stale) {
      mkdirSync(join(temp, name, 'sub'), { recursive: true });
      writeFileSync(join(temp, name, 'sub', 'f.txt'), 'x');
    }
    const sweeper = `const { removed } = sessionfs.sweepStaleTemp(); console.log(JSON.stringify(removed));`;
    const [first, second] = [child(temp, sweeper), child(temp, sweeper)];
    const removed = [...JSON.parse(await first.output), ...JSON.parse(await second.output)] as string[];
    expect(removed.sort()).toEqual(stale.sort());
    expect(ownedNames(temp).sort()).toEqual(aliveNames.sort());
    expect(alive.exitCode).toBe(null);
  });

  it('a process that exits without disposing its workspaces removes their directories', async () => {
    assertBuilt();
    const temp = isolatedTemp();
    const run = child(
      temp,
      `const ws = sessionfs.createWorkspace(sessionfs.hostDriver());
       await ws.write('a.txt', 'x');
       await ws.snapshot();
       process.exit(0);`,
    );
    await run.exited;
    expect(run.process.exitCode).toBe(0);
    expect(readdirSync(temp)).toEqual([]);
  });
});

describe('sessionfs mcp --backend host cleans up however it is stopped', () => {
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP', 'stdin closed'] as const)('%s after start removes the temp root and git dir', async (stop) => {
    assertBuilt();
    const temp = isolatedTemp();
    const server = spawn(process.execPath, [CLI, 'mcp', '--backend', 'host'], {
      cwd: REPO,
      env: { ...process.env, TMPDIR: temp },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    children.push(server);
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    // An initialize answered means the session exists and the server is serving.
    let answered = '';
    const ready = new Promise<void>((resolve) =>
      server.stdout?.on('data', (chunk: Buffer) => {
        answered += chunk.toString();
        if (answered.includes('"id":1')) resolve();
      }),
    );
    server.stdin?.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'sweep-test', version: '1' } },
      })}\n`,
    );
    await ready;
    expect(ownedNames(temp)).toHaveLength(2);
    if (stop === 'stdin closed') server.stdin?.end();
    else server.kill(stop);
    await exited;
    expect(readdirSync(temp)).toEqual([]);
  });

  it('a kill -9 of the server leaves its directories to the next start, which removes them', async () => {
    assertBuilt();
    const temp = isolatedTemp();
    const server = spawn(process.execPath, [CLI, 'mcp', '--backend', 'host'], {
      cwd: REPO,
      env: { ...process.env, TMPDIR: temp },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    children.push(server);
    while (ownedNames(temp).length < 2) await sleep(5);
    const left = ownedNames(temp);
    await killed(server);
    expect(ownedNames(temp)).toEqual(left);
    const next = await workspaceHolder(temp);
    for (let tries = 0; tries < 200 && ownedNames(temp).some((name) => left.includes(name)); tries += 1) await sleep(10);
    expect(ownedNames(temp).filter((name) => left.includes(name))).toEqual([]);
    await killed(next);
  });
});

/** A child in the middle of a streamed write into `root` (its staged temp file open there) until it is killed. */
function midWrite(temp: string, root: string): Promise<ChildProcess> {
  return runningChild(
    temp,
    `const driver = sessionfs.hostDriver({ root: ${JSON.stringify(root)} });
     const ws = sessionfs.createWorkspace(driver);
     await driver.tempFilesSwept;
     const stream = (await ws.createWriteStream('big.bin')).getWriter();
     await stream.write(new Uint8Array(64 * 1024).fill(120));`,
  );
}

const tempFiles = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('.sessionfs-tmp-'));

describe('temp files of writes killed mid-write', () => {
  it('the next workspace on the root removes a killed writer’s, never a live writer’s, and follows no link', async () => {
    assertBuilt();
    const temp = isolatedTemp();
    const root = isolatedTemp();
    const outside = isolatedTemp();
    const killedWriter = await midWrite(temp, root);
    const [killedTemp] = tempFiles(root);
    expect(killedTemp).toMatch(new RegExp(`^\\.sessionfs-tmp-${killedWriter.pid}\\.\\d+\\.${hostTag}-[0-9a-f]{16}$`));
    expect(isTempName(killedTemp!)).toBe(true);
    // While its writer runs, workspaces opening the root (another process's, this one's) leave it alone.
    const liveWriter = await midWrite(temp, root);
    const liveTemp = tempFiles(root).find((name) => name !== killedTemp)!;
    expect(tempFiles(root).sort()).toEqual([killedTemp, liveTemp].sort());
    const early = createWorkspace(hostDriver({ root }));
    expect(await hostOf(early).tempFilesSwept).toEqual([]);
    await early.dispose();
    expect(tempFiles(root).sort()).toEqual([killedTemp, liveTemp].sort());

    await killed(killedWriter);
    // More of the killed writer's names: in a subdirectory, and behind a link to a directory outside the root.
    const sibling = killedTemp!.replace(/[0-9a-f]{16}$/, '0123456789abcdef');
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', sibling), 'half written');
    writeFileSync(join(outside, sibling), 'not the workspace’s to remove');
    symlinkSync(outside, join(root, 'link'));

    const ws = createWorkspace(hostDriver({ root }));
    try {
      expect((await hostOf(ws).tempFilesSwept).sort()).toEqual([killedTemp, `sub/${sibling}`].sort());
      expect(tempFiles(root)).toEqual([liveTemp]);
      expect(tempFiles(join(root, 'sub'))).toEqual([]);
      expect(existsSync(join(outside, sibling))).toBe(true);
      // The live writer's temp file stays hidden.
      expect((await ws.list()).map((entry) => entry.name).sort()).toEqual(['link', 'sub']);
      expect(liveWriter.exitCode).toBe(null);
    } finally {
      await ws.dispose();
      await killed(liveWriter);
    }
  });

  it('a read-only workspace removes nothing', async () => {
    const root = isolatedTemp();
    const gone = child(isolatedTemp(), 'console.log(process.pid);');
    const deadPid = Number((await gone.output).trim());
    const stale = `.sessionfs-tmp-${deadPid}.1.${hostTag}-0123456789abcdef`;
    writeFileSync(join(root, stale), 'x');
    const readOnly = createWorkspace(hostDriver({ root }), { readOnly: true });
    expect(await hostOf(readOnly).tempFilesSwept).toEqual([]);
    await readOnly.dispose();
    expect(tempFiles(root)).toEqual([stale]);
    const writable = createWorkspace(hostDriver({ root }));
    expect(await hostOf(writable).tempFilesSwept).toEqual([stale]);
    await writable.dispose();
  });

  it('a read-only session on a given root removes nothing either', async () => {
    const root = isolatedTemp();
    const gone = child(isolatedTemp(), 'console.log(process.pid);');
    const deadPid = Number((await gone.output).trim());
    const stale = `.sessionfs-tmp-${deadPid}.1.${hostTag}-0123456789abcdef`;
    writeFileSync(join(root, stale), 'x');
    const session = await createSession({ backend: 'host', root, readOnly: true });
    expect(await hostOf(session.filesystem).tempFilesSwept).toEqual([]);
    await session.dispose();
    expect(tempFiles(root)).toEqual([stale]);
  });
});
