import { describe, expect, it } from 'vitest';
import { emptyDirectory, lookup, updateEntry, type DirectoryNode, type FileNode } from '../../src/backends/memory/tree.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

const file = (text: string): FileNode => ({
  type: 'file',
  content: new TextEncoder().encode(text),
  createdAt: 0,
  modifiedAt: 0,
  version: 1,
  mimeType: 'text/plain',
  executable: false,
});

describe('memory workspace metadata', () => {
  it('keeps createdAt on overwrite, moves modifiedAt and takes a new version from one clock on each write', async () => {
    const ws = createWorkspace(memoryDriver());
    await ws.write('a.txt', 'one');
    const first = await ws.stat('a.txt');
    expect(first.version).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await ws.write('a.txt', 'two');
    await ws.write('a.txt', '!', { mode: 'append' });
    const third = await ws.stat('a.txt');
    expect(third.version).toBe(3);
    expect(third.createdAt).toEqual(first.createdAt);
    expect(third.modifiedAt!.getTime()).toBeGreaterThan(first.modifiedAt!.getTime());
  });

  it('takes mimeType from the write options, or guesses it from the extension', async () => {
    const ws = createWorkspace(memoryDriver());
    await ws.write('notes.md', '# hi');
    await ws.write('data', '{}', { mimeType: 'application/json' });
    await ws.writeBytes('image.PNG', new Uint8Array([0x89]));
    await ws.write('unknown.zzz', '');
    expect((await ws.stat('notes.md')).mimeType).toBe('text/markdown');
    expect((await ws.stat('data')).mimeType).toBe('application/json');
    expect((await ws.stat('image.PNG')).mimeType).toBe('image/png');
    expect((await ws.stat('unknown.zzz')).mimeType).toBe('application/octet-stream');
    await ws.write('data', '[]');
    expect((await ws.stat('data')).mimeType).toBe('application/json');
  });

  it('guesses no MIME type from an extension that names an Object property', async () => {
    const ws = createWorkspace(memoryDriver());
    for (const name of ['x.constructor', 'x.toString', 'x.__proto__', 'x.hasOwnProperty']) {
      await ws.write(name, '');
      expect((await ws.stat(name)).mimeType).toBe('application/octet-stream');
    }
  });

  it('makes a copied file a new file and keeps the original untouched', async () => {
    const ws = createWorkspace(memoryDriver());
    await ws.write('a.txt', 'a');
    await ws.write('a.txt', 'a2');
    await ws.copy('a.txt', 'b.txt');
    // A copy is a new file: the next version of the workspace's clock, never the source's.
    expect((await ws.stat('b.txt')).version).toBe(3);
    expect((await ws.stat('a.txt')).version).toBe(2);
  });

  it('has root "/" and reports the memory backend', () => {
    const ws = createWorkspace(memoryDriver());
    expect(ws.root).toBe('/');
    expect(ws.backend).toBe('memory');
  });

  it('forgets its snapshots on dispose', async () => {
    const ws = createWorkspace(memoryDriver());
    await ws.write('a.txt', 'a');
    const snapshot = await ws.snapshot();
    await ws.dispose();
    expect(await ws.list('/')).toEqual([]);
    await expect(ws.restore(snapshot)).rejects.toMatchObject({ code: 'ESNAPSHOT' });
  });
});

describe('the persistent tree', () => {
  function wideTree(): DirectoryNode {
    let root = emptyDirectory(0);
    for (let d = 0; d < 20; d += 1) {
      for (let f = 0; f < 50; f += 1) root = updateEntry(root, [`d${d}`, `f${f}.txt`], () => file(`${d}/${f}`), true, 0);
    }
    return root;
  }

  it('copies only the path to a changed entry and shares every other node', () => {
    const before = wideTree();
    const after = updateEntry(before, ['d3', 'f7.txt'], () => file('changed'), false, 1);
    expect(after).not.toBe(before);
    expect(lookup(after, ['d3'])).not.toBe(lookup(before, ['d3']));
    for (let d = 0; d < 20; d += 1) {
      if (d !== 3) expect(lookup(after, [`d${d}`])).toBe(lookup(before, [`d${d}`]));
    }
    for (let f = 0; f < 50; f += 1) {
      if (f !== 7) expect(lookup(after, ['d3', `f${f}.txt`])).toBe(lookup(before, ['d3', `f${f}.txt`]));
    }
    expect(new TextDecoder().decode((lookup(before, ['d3', 'f7.txt']) as FileNode).content)).toBe('3/7');
  });

  it('returns the same root when an update changes nothing', () => {
    const before = wideTree();
    const same = updateEntry(before, ['d1', 'f1.txt'], (existing) => existing, false, 1);
    expect(same).toBe(before);
  });

  it('leaves the tree untouched when an update throws', () => {
    const before = wideTree();
    expect(() => updateEntry(before, ['d1', 'f1.txt', 'child'], () => file('x'), true, 1)).toThrow(/not a directory/);
    expect(() => updateEntry(before, ['missing', 'x'], () => file('x'), false, 1)).toThrow(/does not exist/);
    expect(lookup(before, ['missing'])).toBeUndefined();
  });
});
