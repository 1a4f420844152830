import { describe, expect, it } from 'vitest';
import type { WatchEvent } from '../workspace/watch-event.js';
import { expectError, workspaces, type ComplianceHarness } from './harness.js';

/** The next `count` events, or a failure naming what arrived when they do not come within a second. */
async function take(events: AsyncIterator<WatchEvent>, count: number): Promise<WatchEvent[]> {
  const got: WatchEvent[] = [];
  while (got.length < count) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`expected ${count} events, got ${JSON.stringify(got)}`)), 1000);
    });
    const next = await Promise.race([events.next(), timeout]).finally(() => clearTimeout(timer));
    if (next.done === true) throw new Error(`watch ended after ${JSON.stringify(got)}`);
    got.push(next.value);
  }
  return got;
}

/** Whether the iterator ends (rather than yielding or hanging) within a second. */
async function ends(events: AsyncIterator<WatchEvent>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), 1000)));
  const next = await Promise.race([events.next(), timeout]).finally(() => clearTimeout(timer));
  return next !== 'hung' && next.done === true;
}

export function watchEvents(harness: ComplianceHarness): void {
  describe('watch', () => {
    const create = workspaces(harness);

    it('reports what each protocol operation created, modified and deleted', async () => {
      const ws = await create();
      const events = ws.watch();
      await ws.write('a/b/one.txt', '1');
      await ws.write('a/b/one.txt', '2');
      await ws.writeBytes('a/b/one.txt', new Uint8Array([51]), { mode: 'append' });
      await ws.mkdir('x/y');
      await ws.copy('a', 'c', { recursive: true });
      const before = await take(events, 10);
      // A rename is a move, or a copy and a delete on a backend without moves: the order of its two events is the backend's.
      await ws.rename('c/b/one.txt', 'x/y/two.txt');
      const renamed = await take(events, 2);
      await ws.delete('a', { recursive: true });
      expect([...before, ...renamed.sort((l, r) => l.type.localeCompare(r.type)), ...(await take(events, 3))]).toEqual([
        { type: 'created', path: 'a' },
        { type: 'created', path: 'a/b' },
        { type: 'created', path: 'a/b/one.txt' },
        { type: 'modified', path: 'a/b/one.txt' },
        { type: 'modified', path: 'a/b/one.txt' },
        { type: 'created', path: 'x' },
        { type: 'created', path: 'x/y' },
        { type: 'created', path: 'c' },
        { type: 'created', path: 'c/b' },
        { type: 'created', path: 'c/b/one.txt' },
        { type: 'created', path: 'x/y/two.txt' },
        { type: 'deleted', path: 'c/b/one.txt' },
        { type: 'deleted', path: 'a/b/one.txt' },
        { type: 'deleted', path: 'a/b' },
        { type: 'deleted', path: 'a' },
      ]);
      await events.return?.();
    });

    it('reports what writeFiles created and modified, as the same writes one by one would', async () => {
      const ws = await create();
      if (ws.writeFiles === undefined) return; // optional in the protocol
      await ws.write('a/old.txt', '1');
      await ws.mkdir('kept');
      const events = ws.watch();
      const bytes = (text: string) => new TextEncoder().encode(text);
      await ws.writeFiles([
        { kind: 'file', path: 'a/old.txt', content: bytes('2') },
        { kind: 'file', path: 'a/b/new.txt', content: bytes('3') },
        { kind: 'directory', path: 'kept' },
        { kind: 'directory', path: 'd/e' },
        { kind: 'file', path: 'a/b/new.txt', content: bytes('4') },
      ]);
      expect(await take(events, 6)).toEqual([
        { type: 'modified', path: 'a/old.txt' },
        { type: 'created', path: 'a/b' },
        { type: 'created', path: 'a/b/new.txt' },
        { type: 'created', path: 'd' },
        { type: 'created', path: 'd/e' },
        { type: 'modified', path: 'a/b/new.txt' },
      ]);
      await ws.write('z.txt', 'after');
      expect(await take(events, 1)).toEqual([{ type: 'created', path: 'z.txt' }]);
      await events.return?.();
    });

    it('reports only changes under path, and nothing for a refused operation', async () => {
      const ws = await create();
      await ws.write('src/keep.txt', 'keep');
      const events = ws.watch({ path: 'src' });
      await ws.write('other.txt', 'o');
      await expectError(ws.write('src/keep.txt', 'x', { mode: 'create' }), 'FileExistsError', 'EEXIST');
      await ws.write('srcfile.txt', 'not under src');
      await ws.write('src/new.txt', 'n');
      expect(await take(events, 1)).toEqual([{ type: 'created', path: 'src/new.txt' }]);
      await events.return?.();
    });

    it('reports what a restore changed', async () => {
      const ws = await create();
      await ws.write('keep.txt', 'keep');
      await ws.write('edit.txt', 'before');
      await ws.write('gone.txt', 'gone');
      const snapshot = await ws.snapshot();
      await ws.write('edit.txt', 'after');
      await ws.delete('gone.txt');
      await ws.write('added.txt', 'new');
      const events = ws.watch();
      await ws.restore(snapshot);
      const got = await take(events, 3);
      expect(got.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
        { type: 'deleted', path: 'added.txt' },
        { type: 'modified', path: 'edit.txt' },
        { type: 'created', path: 'gone.txt' },
      ]);
      await events.return?.();
    });

    it('never blocks a writer: a full buffer drops events and signals overflow', async () => {
      const ws = await create();
      const events = ws.watch({ maxBuffered: 3 });
      for (let i = 0; i < 10; i += 1) await ws.write(`f${i}.txt`, 'x');
      expect(await take(events, 4)).toEqual([
        { type: 'created', path: 'f0.txt' },
        { type: 'created', path: 'f1.txt' },
        { type: 'created', path: 'f2.txt' },
        { type: 'overflow', path: '/', dropped: 7 },
      ]);
      await ws.write('after.txt', 'x');
      expect(await take(events, 1)).toEqual([{ type: 'created', path: 'after.txt' }]);
      await events.return?.();
    });

    it('ends on abort, on break, and when the workspace is disposed', async () => {
      const ws = await create();
      const controller = new AbortController();
      const aborted = ws.watch({ signal: controller.signal });
      const pending = aborted.next();
      controller.abort();
      expect(await pending).toEqual({ value: undefined, done: true });
      expect(await ends(ws.watch({ signal: AbortSignal.abort() }))).toBe(true);

      const seen: WatchEvent[] = [];
      const loop = (async () => {
        for await (const event of ws.watch()) {
          seen.push(event);
          break;
        }
      })();
      await ws.write('one.txt', '1');
      await loop;
      await ws.write('two.txt', '2');
      expect(seen).toEqual([{ type: 'created', path: 'one.txt' }]);

      const open = ws.watch();
      await ws.dispose();
      expect(await ends(open)).toBe(true);
      expect(await ends(ws.watch())).toBe(true);
    });

    it('refuses bad options', async () => {
      const ws = await create();
      expect(() => ws.watch({ maxBuffered: 0 })).toThrow(/maxBuffered must be a positive whole number/);
      expect(() => ws.watch({ path: '../outside' })).toThrow();
      expect(() => ws.watch({ signal: 'soon' as never })).toThrow(/AbortSignal/);
    });
  });
}
