import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { hydrate } from '../../src/sources/index.js';
import { AllowedRoots } from '../../src/host-files/allow-list.js';
import { LimitExceededError } from '../../src/workspace/errors.js';
import { compare } from '../../src/sources/copy-order.js';
import { Planner } from '../../src/sources/plan.js';
import { JOB_FILES, ReadAhead, UNANSWERED_MOST, WINDOW_BYTES } from '../../src/sources/read-ahead.js';
import { batchBytes, outcomeOf, readHostFiles, type ReadBatch, type ReadJob, type ReadOutcome } from '../../src/sources/read-files.js';
import { HostFileReader } from '../../src/sources/read-pool.js';
import { contentsOf, tempDirs } from '../../src/testing/harness.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

// Large hydrations read their files on reader threads, a bounded window ahead of the writes (see
// src/sources/read-ahead.ts). Every guarantee of a small hydration holds there too.

const dirs = tempDirs();

/** Every file's outcome in `batch`, in order. */
function outcomes(batch: ReadBatch): ReadOutcome[] {
  return Array.from({ length: batch.count }, (_, index) => outcomeOf(batch, index));
}

/** `count` small files under `bulk/` (enough to be read on the reader threads), as a tree spec. */
function bulk(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i += 1) files[`bulk/d${i % 7}/f${String(i).padStart(4, '0')}.txt`] = `file ${i}\n`;
  return files;
}

function write(base: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(base, path, '..'), { recursive: true });
    writeFileSync(join(base, path), content);
  }
}

/** A workspace whose `snapshot` (taken after the walk, before the copy) runs `between` first. */
function racing(workspace: SnapshotableWorkspace, between: () => void): SnapshotableWorkspace {
  return new Proxy(workspace, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === 'snapshot') {
        return async (...args: unknown[]) => {
          between();
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('hydration of a large tree (read on reader threads)', () => {
  it('does not read through a file or a parent swapped for a link to outside between the walk and the copy', async () => {
    // The swapped files sort last, after the whole jobs read while the walk went on (603 files: 4 jobs of 128).
    const base = dirs();
    const allowed = join(base, 'allowed');
    const project = join(allowed, 'project');
    write(join(base, 'secret'), { 'key.pem': 'TOP SECRET', 'dir/key.pem': 'SECRET key' });
    write(project, { ...bulk(600), 'ok.txt': 'ok', 'swapped.txt': 'plain', 'zdir/key.pem': 'public key' });
    const workspace = createWorkspace(memoryDriver());
    const swapped = racing(workspace, () => {
      renameSync(join(project, 'zdir'), join(project, 'zdir-old'));
      symlinkSync(join(base, 'secret', 'dir'), join(project, 'zdir'));
      renameSync(join(project, 'swapped.txt'), join(project, 'swapped-old.txt'));
      symlinkSync(join(base, 'secret', 'key.pem'), join(project, 'swapped.txt'));
    });
    const result = await hydrate(swapped, [{ hostPath: project, path: '/' }], { allowedHostRoots: [allowed] });
    const contents = await contentsOf(workspace);
    expect(JSON.stringify(contents)).not.toContain('SECRET');
    expect(result.files).toBe(601);
    expect(contents['bulk/d3/f0598.txt']).toBe('file 598\n');
    expect(result.skipped).toEqual([
      { path: 'swapped.txt', reason: 'became a symlink during hydration' },
      { path: 'zdir/key.pem', reason: 'moved outside the allowed roots during hydration' },
    ]);
  });

  it('copies large files among many small ones whole and in their places (a read job stops early for its bytes)', async () => {
    const project = dirs();
    const large = [randomBytes(5 * 1024 * 1024), randomBytes(9 * 1024 * 1024), randomBytes(3 * 1024 * 1024)];
    write(project, { ...bulk(400), 'bulk/d1/f0100.bin': large[0]!, 'bulk/d1/f0101.bin': large[1]!, 'bulk/d4/f0300.bin': large[2]! });
    const workspace = createWorkspace(memoryDriver());
    const result = await hydrate(workspace, [{ hostPath: project, path: 'p' }], { allowedHostRoots: [project] });
    expect(result.files).toBe(403);
    for (const [path, bytes] of [
      ['p/bulk/d1/f0100.bin', large[0]],
      ['p/bulk/d1/f0101.bin', large[1]],
      ['p/bulk/d4/f0300.bin', large[2]],
    ] as const)
      expect(Buffer.from((await workspace.readBytes(path)).content).equals(bytes!)).toBe(true);
    const contents = await contentsOf(workspace);
    for (let i = 0; i < 400; i += 1) expect(contents[`p/bulk/d${i % 7}/f${String(i).padStart(4, '0')}.txt`]).toBe(`file ${i}\n`);
  });
});

describe('hydration reading while the plan is walked', () => {
  it("plans a source's files in the order the copy takes them (a directory sorts as its name and a slash)", async () => {
    const project = dirs();
    write(project, { 'a.js': '1', 'a/x.js': '2', 'a-b': '3', a0: '4', 'a/b.c/d': '5', 'a/b/e': '6', B: '7', 'a.js.map': '8' });
    const workspace = createWorkspace(memoryDriver());
    const plan = new Planner(workspace, await AllowedRoots.resolve([project]), undefined);
    await plan.addSource(0, { hostPath: project, path: 'p' });
    const inCopyOrder = [...plan.entries]
      .filter(([, entry]) => entry.kind === 'file')
      .sort((a, b) => compare(a[0], b[0]))
      .map(([, entry]) => entry);
    expect(plan.walked).toEqual(inCopyOrder);
    expect(plan.walked.map((file) => file.real.slice(project.length + 1))).toEqual([
      'B',
      'a-b',
      'a.js',
      'a.js.map',
      'a/b.c/d',
      'a/b/e',
      'a/x.js',
      'a0',
    ]);
  });

  it("copies the later source's file where sources overlap, though the reads began in walk order", async () => {
    const base = dirs();
    const first = join(base, 'first');
    const second = join(base, 'second');
    write(first, { ...bulk(400), 'only-first.txt': 'first' });
    const replaced: Record<string, string> = {};
    for (let i = 0; i < 400; i += 2) replaced[`bulk/d${i % 7}/f${String(i).padStart(4, '0')}.txt`] = `second ${i}\n`;
    write(second, replaced);
    const workspace = createWorkspace(memoryDriver());
    const result = await hydrate(
      workspace,
      [
        { hostPath: first, path: 'p' },
        { hostPath: second, path: 'p' },
      ],
      { allowedHostRoots: [base] },
    );
    expect(result.files).toBe(401);
    const contents = await contentsOf(workspace);
    for (let i = 0; i < 400; i += 1)
      expect(contents[`p/bulk/d${i % 7}/f${String(i).padStart(4, '0')}.txt`]).toBe(i % 2 === 0 ? `second ${i}\n` : `file ${i}\n`);
    expect(contents['p/only-first.txt']).toBe('first');
  });

  it('writes nothing when the walk fails a limit after reads began', async () => {
    const project = dirs();
    write(project, { ...bulk(900), 'zz/last.txt': 'x'.repeat(10_000) });
    const workspace = createWorkspace(memoryDriver());
    await expect(hydrate(workspace, [{ hostPath: project, path: 'p', maxBytes: 15_000 }], { allowedHostRoots: [project] })).rejects.toThrow(
      LimitExceededError,
    );
    expect(await contentsOf(workspace)).toEqual({});
  });
});

describe('ReadAhead', () => {
  it('reads a growing list ahead in whole jobs before anything is taken, up to its bytes, then gives every outcome in order', async () => {
    const project = dirs();
    // Files whose job of JOB_FILES stays under a job's bytes; enough for 20 jobs, more than the window.
    const size = 31 * 1024;
    const jobBytes = JOB_FILES * size;
    const count = 20 * JOB_FILES + 5;
    const paths: string[] = [];
    const reasons = { unreadable: 'unreadable', special: 'special' };
    let asked = 0;
    const reads = new ReadAhead(
      paths,
      { roots: [project], maxFileBytes: 1 << 30, pinDirectories: false, reasons },
      async (job) => {
        asked += job.paths.length;
        return readHostFiles(fs, job);
      },
      { growing: true },
    );
    for (let i = 0; i < count; i += 1) {
      const path = join(project, `f${String(i).padStart(5, '0')}`);
      writeFileSync(path, `${i}.`);
      fs.truncateSync(path, size);
      paths.push(path);
      reads.grew();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Whole jobs only, and no more once WINDOW_BYTES are held.
    expect(asked).toBe(Math.ceil(WINDOW_BYTES / jobBytes) * JOB_FILES);
    reads.complete();
    for (let taken = 0; taken < count; taken += 1) {
      const outcome = await reads.next();
      if (!('bytes' in outcome)) throw new Error(`not read: ${outcome.skip}`);
      expect(Buffer.from(outcome.bytes).toString().split('.')[0]).toBe(String(taken));
    }
    expect(asked).toBe(count);
  });

  it('keeps the bytes read and not taken within its window, and gives every outcome in order', async () => {
    const project = dirs();
    // Sparse files of a job's bytes each: a job answers one, and the window holds WINDOW_BYTES of them.
    const size = 4 * 1024 * 1024;
    const count = Math.ceil(WINDOW_BYTES / size) + 2 * UNANSWERED_MOST;
    const paths: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const path = join(project, `f${String(i).padStart(5, '0')}`);
      writeFileSync(path, `${i}.`);
      fs.truncateSync(path, size);
      paths.push(path);
    }
    let read = 0;
    const reasons = { unreadable: 'unreadable', special: 'special' };
    const reads = new ReadAhead(paths, { roots: [project], maxFileBytes: 1 << 30, pinDirectories: false, reasons }, async (job) => {
      const batch = readHostFiles(fs, job);
      read += batchBytes(batch);
      return batch;
    });
    let taken = 0;
    const first = await reads.next();
    if (!('bytes' in first)) throw new Error(`not read: ${first.skip}`);
    taken += first.bytes.byteLength;
    for (let tick = 0; tick < 50; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    // Filled up to its window while nothing more was taken, and no further than a job past it.
    expect(read - taken).toBeGreaterThanOrEqual(WINDOW_BYTES);
    expect(read - taken).toBeLessThanOrEqual(WINDOW_BYTES + size);
    for (let index = 1; index < count; index += 1) {
      const outcome = await reads.next();
      if (!('bytes' in outcome)) throw new Error(`not read: ${outcome.skip}`);
      expect(Buffer.from(outcome.bytes.subarray(0, 8)).toString().split('.')[0]).toBe(String(index));
    }
    expect(read).toBe(count * size);
  });

  it('goes on reading the jobs after one slow to answer (a large file) while the caller waits for it', async () => {
    const project = dirs();
    const count = 20 * JOB_FILES;
    const paths: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const path = join(project, `f${String(i).padStart(5, '0')}`);
      writeFileSync(path, String(i));
      paths.push(path);
    }
    let asked = 0;
    let answerFirst: (() => void) | undefined;
    const reasons = { unreadable: 'unreadable', special: 'special' };
    const reads = new ReadAhead(paths, { roots: [project], maxFileBytes: 1 << 20, pinDirectories: false, reasons }, (job) => {
      asked += job.paths.length;
      const batch = readHostFiles(fs, job);
      if (job.paths[0] !== paths[0]) return Promise.resolve(batch);
      return new Promise((resolve) => (answerFirst = () => resolve(batch)));
    });
    const first = reads.next();
    for (let tick = 0; tick < 50; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    // Every later job was asked for and answered meanwhile: only the first is unanswered, and the files are tiny.
    expect(asked).toBe(count);
    answerFirst?.();
    const outcomes = [await first];
    for (let index = 1; index < count; index += 1) outcomes.push(await reads.next());
    expect(outcomes.map((outcome) => ('bytes' in outcome ? Buffer.from(outcome.bytes).toString() : outcome.skip))).toEqual(
      paths.map((_, index) => String(index)),
    );
  });
});

describe('readHostFiles', () => {
  it('packs small files into shared slabs of exactly their bytes; a large file or one of unknown size (procfs) gets its own', () => {
    const project = dirs();
    const large = randomBytes(300 * 1024);
    write(project, { 'a.txt': 'hello', 'b.txt': 'world!', 'empty.txt': '', 'large.bin': large });
    const reasons = { unreadable: 'unreadable', special: 'special' };
    const job = { roots: ['/proc', project], maxFileBytes: 1 << 20, maxJobBytes: 1 << 30, pinDirectories: false, reasons };
    const names = ['a.txt', 'b.txt', 'empty.txt', 'large.bin'].map((name) => join(project, name));
    const batch = readHostFiles(fs, { ...job, paths: [...names, '/proc/self/status'] });
    const [a, b, empty, own, status] = outcomes(batch).map((outcome) => {
      if (!('bytes' in outcome)) throw new Error(`not read: ${outcome.skip}`);
      return outcome.bytes;
    }) as Uint8Array[];
    expect([a, b].map((bytes) => Buffer.from(bytes!).toString())).toEqual(['hello', 'world!']);
    expect(a!.buffer).toBe(b!.buffer);
    expect(a!.buffer.byteLength).toBe(11);
    expect(empty!.byteLength).toBe(0);
    expect(Buffer.from(own!).equals(large)).toBe(true);
    expect(own!.buffer.byteLength).toBe(large.byteLength);
    expect(status!.byteLength).toBeGreaterThan(0);
    expect(status!.buffer.byteLength).toBe(status!.byteLength);
    // Nothing beyond the files' bytes is held: the slab, the large file's memory, the procfs file's.
    expect(batch.buffers.reduce((sum, buffer) => sum + buffer.byteLength, 0)).toBe(11 + large.byteLength + status!.byteLength);
  });

  it('stops a job after the file that reaches its bytes, and closes every descriptor it opened', () => {
    const project = dirs();
    write(project, { 'a.bin': new Uint8Array(3000), 'b.bin': new Uint8Array(3000), 'c.bin': new Uint8Array(3000) });
    const open = () => fs.readdirSync('/proc/self/fd').length;
    const before = open();
    const batch = readHostFiles(fs, {
      paths: ['a.bin', 'b.bin', 'c.bin'].map((name) => join(project, name)),
      roots: [project],
      maxFileBytes: 1 << 20,
      maxJobBytes: 5000,
      pinDirectories: process.platform === 'linux',
      reasons: { unreadable: 'unreadable', special: 'special' },
    });
    expect(outcomes(batch).map((outcome) => ('bytes' in outcome ? outcome.bytes.byteLength : outcome.skip))).toEqual([3000, 3000]);
    expect(open()).toBe(before);
  });
});

describe('HostFileReader', () => {
  it('answers jobs from its workers in any number, and rejects a job nobody can read rather than failing the process', async () => {
    const project = dirs();
    write(project, { 'a.txt': 'a', 'b.txt': 'bb' });
    const reader = new HostFileReader(2);
    const reasons = { unreadable: 'unreadable', special: 'special' };
    const job = { roots: [project], maxFileBytes: 100, maxJobBytes: 1 << 20, pinDirectories: process.platform === 'linux', reasons };
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => reader.read({ ...job, paths: [join(project, i % 2 === 0 ? 'a.txt' : 'b.txt')] })),
    );
    expect(
      answers.map((batch) => outcomeOf(batch, 0)).map((outcome) => ('bytes' in outcome ? Buffer.from(outcome.bytes).toString() : '?')),
    ).toEqual(['a', 'bb', 'a', 'bb', 'a', 'bb']);
    // Not a list of paths: the worker fails on it, and so does the calling thread.
    await expect(reader.read({ ...job, paths: 42 } as unknown as ReadJob)).rejects.toThrow(TypeError);
  });
});
