import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWorkspace, DriverWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { createSession } from '../../src/index.js';
import type { WorkspaceSnapshot } from '../../src/index.js';
import { scratch } from './support.js';

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('a session on a given host root starts before its baseline is taken', () => {
  const { dir } = scratch();
  afterEach(() => vi.restoreAllMocks());

  /** Holds the first snapshot (the session's baseline) until `baseline.open()`. */
  function holdBaseline(): { open: () => void; taken: () => boolean } {
    const baseline = gate();
    const original = DriverWorkspace.prototype.snapshot;
    let held = false;
    let taken = false;
    vi.spyOn(DriverWorkspace.prototype, 'snapshot').mockImplementation(async function (
      this: DriverWorkspace,
      ...args
    ): Promise<WorkspaceSnapshot> {
      if (held) return original.apply(this, args);
      held = true;
      await baseline.opened;
      const record = await original.apply(this, args);
      taken = true;
      return record;
    });
    return { open: baseline.open, taken: () => taken };
  }

  it('answers reads at once, holds every change until the baseline is taken, and reset still goes back to it', async () => {
    const root = dir();
    fs.writeFileSync(join(root, 'a.txt'), 'before');
    const baseline = holdBaseline();
    const session = await createSession({ backend: 'host', root, rollback: 'journal' });
    try {
      // Without the deferral createSession waits for the held baseline, and this test times out.
      expect(await session.filesystem.read('a.txt')).toMatchObject({ content: 'before' });
      let written = false;
      const write = session.filesystem.write('a.txt', 'after').then(() => (written = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(written).toBe(false);
      expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe('before');
      baseline.open();
      await write;
      expect(baseline.taken()).toBe(true);
      expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe('after');
      await session.reset();
      expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe('before');
    } finally {
      baseline.open();
      await session.dispose();
    }
  });

  it('dispose stops a baseline still being taken instead of waiting for the rest of the scan', async () => {
    const root = dir();
    fs.writeFileSync(join(root, 'a.txt'), 'before');
    let signal: AbortSignal | undefined;
    // A baseline that ends only when its signal aborts (a very big root, as far as dispose can tell).
    vi.spyOn(DriverWorkspace.prototype, 'snapshot').mockImplementation(async (options) => {
      signal = options?.signal;
      await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
      throw new Error('aborted');
    });
    const session = await createSession({ backend: 'host', root });
    expect(await session.filesystem.read('a.txt')).toMatchObject({ content: 'before' });
    expect(signal?.aborted).toBe(false);
    await session.dispose(); // without the abort, this waits for ever
    expect(signal?.aborted).toBe(true);
    expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe('before');
  }, 10_000);

  it('a changing tool call waits for the baseline; a failed baseline fails the change, nothing written', async () => {
    const root = dir();
    fs.writeFileSync(join(root, 'a.txt'), 'before');
    vi.spyOn(DriverWorkspace.prototype, 'snapshot').mockRejectedValueOnce(new Error('disk on fire'));
    const session = await createSession({ backend: 'host', root, rollback: 'journal' });
    try {
      const { workspaceTools } = await import('../../src/index.js');
      const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
      const read = await session.runTool(tools.get('read_file') as never, { path: 'a.txt' });
      expect(read.success).toBe(true);
      const write = await session.runTool(tools.get('write_file') as never, { path: 'a.txt', content: 'after' });
      expect(write).toMatchObject({ success: false, code: 'ESNAPSHOT' });
      expect(write.message).toMatch(/starting state failed/);
      expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe('before');
    } finally {
      await session.dispose();
    }
  });

  it('a first snapshot of a big root lets the event loop run while it hashes', async () => {
    const root = dir();
    for (let i = 0; i < 1500; i += 1) {
      if (i % 100 === 0) fs.mkdirSync(join(root, `d${i / 100}`));
      fs.writeFileSync(join(root, `d${Math.floor(i / 100)}`, `f${i}.txt`), `file ${i}\n`.repeat(50));
    }
    const ws = createWorkspace(hostDriver({ root }));
    try {
      let turns = 0;
      let done = false;
      const tick = (): void => {
        turns += 1;
        if (!done) setImmediate(tick);
      };
      setImmediate(tick);
      await ws.snapshot();
      done = true;
      // A synchronous scan gives no turn until it returns.
      expect(turns).toBeGreaterThan(1);
    } finally {
      await ws.dispose();
    }
  });
});
