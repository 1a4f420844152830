import { describe, expect, it } from 'vitest';
import { bytes, contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

export function readOnlyMode(harness: ComplianceHarness): void {
  describe('read-only', () => {
    const create = workspaces(harness);

    it('refuses every mutation with ReadOnlyError, checked before anything else', async () => {
      const ws = await create({ readOnly: true });
      expect(ws.readOnly).toBe(true);
      const attempts: [string, () => Promise<unknown>][] = [
        ['write', () => ws.write('a.txt', 'x')],
        ['writeBytes', () => ws.writeBytes('a.bin', bytes('x'))],
        ['append', () => ws.write('a.txt', 'x', { mode: 'append' })],
        ['mkdir', () => ws.mkdir('d')],
        ['delete', () => ws.delete('a.txt')],
        ['rename', () => ws.rename('a', 'b')],
        ['copy', () => ws.copy('a', 'b')],
        // Checked first: even a path that is invalid or escapes gets EROFS.
        ['write invalid path', () => ws.write('bad\u0000name', 'x')],
        ['write escaping path', () => ws.write('../escape', 'x')],
        ['delete root', () => ws.delete('/')],
      ];
      for (const [, attempt] of attempts) await expectError(attempt(), 'ReadOnlyError', 'EROFS');
      expect(await ws.list('/')).toEqual([]);
    });

    it('allows snapshots but refuses restore', async () => {
      const ws = await create({ readOnly: true });
      const snapshot = await ws.snapshot();
      await expectError(ws.restore(snapshot), 'ReadOnlyError', 'EROFS');
    });

    it('seal() makes a populated workspace read-only for good, and reads still work', async () => {
      const ws = await create();
      await ws.write('src/a.ts', 'export const a = 1;\n');
      const snapshot = await ws.snapshot();
      ws.seal();
      expect(ws.readOnly).toBe(true);
      await expectError(ws.write('src/a.ts', 'changed'), 'ReadOnlyError', 'EROFS');
      await expectError(ws.restore(snapshot), 'ReadOnlyError', 'EROFS');
      expect((await ws.read('src/a.ts')).content).toBe('export const a = 1;');
      expect(await ws.glob('**/*.ts')).toEqual([{ path: 'src/a.ts', isFile: true }]);
      expect(await ws.grep('const')).toHaveLength(1);
      expect(await ws.exists('src')).toBe(true);
      expect(await contentsOf(ws)).toEqual({ 'src/': '', 'src/a.ts': 'export const a = 1;\n' });
    });
  });
}

export function concurrency(harness: ComplianceHarness): void {
  describe('concurrency', () => {
    const create = workspaces(harness);

    it('loses nothing under hundreds of concurrent writes to different files', async () => {
      const ws = await create();
      await Promise.all(Array.from({ length: 300 }, (_, i) => ws.write(`many/${i % 7}/f${i}.txt`, `content ${i}`)));
      const files = await ws.glob('many/**');
      expect(files).toHaveLength(300);
      for (const i of [0, 150, 299]) expect((await ws.read(`many/${i % 7}/f${i}.txt`)).content).toBe(`content ${i}`);
    });

    it('loses nothing under hundreds of concurrent appends to one file', async () => {
      const ws = await create();
      await ws.write('log.txt', '');
      await Promise.all(Array.from({ length: 300 }, (_, i) => ws.write('log.txt', `entry ${i}\n`, { mode: 'append' })));
      const lines = (await ws.read('log.txt', { limit: -1 })).content.split('\n');
      expect(lines).toHaveLength(300);
      expect(new Set(lines)).toEqual(new Set(Array.from({ length: 300 }, (_, i) => `entry ${i}`)));
    });

    it('keeps concurrent overwrites of one file whole (one of the writes wins, never a mix)', async () => {
      const ws = await create();
      const writes = Array.from({ length: 100 }, (_, i) => String(i).repeat(1000));
      await Promise.all(writes.map((content) => ws.write('race.txt', content)));
      expect(writes).toContain((await ws.read('race.txt')).content);
    });

    it('keeps a snapshot taken amid concurrent writes restorable', async () => {
      const ws = await create();
      const writes = Array.from({ length: 100 }, (_, i) => ws.write(`c/${i}.txt`, `${i}`));
      const snapshot = await ws.snapshot();
      await Promise.all(writes);
      await ws.restore(snapshot);
      const count = (await ws.glob('c/*')).length;
      expect(count).toBeLessThanOrEqual(100);
      await ws.restore(snapshot);
      expect((await ws.glob('c/*')).length).toBe(count);
    });
  });
}
