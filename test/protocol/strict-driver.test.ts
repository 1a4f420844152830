import { describe, expect, it } from 'vitest';
import { kvDriver } from '../../examples/kv-backend.js';
import { MemoryDriver } from '../../src/backends/memory/driver.js';
import { strictDriver } from '../../src/testing/index.js';

describe('strictDriver', () => {
  it('fails loudly, and reports, every call outside the preconditions the docs promise a driver', async () => {
    const reported: string[] = [];
    const driver = strictDriver(new MemoryDriver(), (message) => reported.push(message));
    await driver.mkdir('dir');
    await driver.writeFile('dir/a.txt', new TextEncoder().encode('a'), { mode: 'create' });
    const refused = [
      () => driver.readFile('missing.txt', { offset: 0 }),
      () => driver.readFile('dir', { offset: 0 }),
      () => driver.stat('missing.txt'),
      () => driver.list('dir/a.txt'),
      () => driver.list('missing'),
      () => driver.mkdir('dir'),
      () => driver.mkdir('dir/a.txt/below'),
      () => driver.remove('missing.txt', { recursive: false }),
      () => driver.remove('dir', { recursive: false }),
      () => driver.writeFile('nowhere/b.txt', new Uint8Array(1), { mode: 'overwrite' }),
      () => driver.writeFile('dir', new Uint8Array(1), { mode: 'overwrite' }),
      () => driver.writeFile('dir/a.txt', new Uint8Array(1), { mode: 'create' }),
      () => driver.move!('missing.txt', 'b.txt'),
      () => driver.copy!('dir/a.txt', 'dir'),
      () => driver.openFile!('missing.txt'),
      async () => {
        for await (const entry of driver.walk('dir/a.txt')) void entry;
      },
    ];
    for (const call of refused) await expect(call()).rejects.toThrow(/^strict driver memory: /);
    expect(reported).toHaveLength(refused.length);
    // Within them every call goes through to the driver.
    await driver.remove('dir', { recursive: true });
    expect(await driver.kind('dir')).toBeUndefined();
  });

  it('holds the optional file-kind primitives to their preconditions', async () => {
    const reported: string[] = [];
    const driver = strictDriver(new MemoryDriver(), (message) => reported.push(message));
    await driver.mkdir('dir');
    await driver.writeFile('dir/a.txt', new TextEncoder().encode('a'), { mode: 'create' });
    await driver.symlink!('dir/a.txt', 'file-link');
    await driver.symlink!('dir', 'dir-link');
    const refused = [
      () => driver.setExecutable!('dir', true),
      () => driver.setExecutable!('missing', true),
      () => driver.setExecutable!('dir-link', true),
      () => driver.symlink!('x', 'dir/a.txt'),
      () => driver.symlink!('x', 'file-link'),
      () => driver.symlink!('x', ''),
      () => driver.symlink!('x', 'nowhere/link'),
      () => driver.symlink!('x', 'dir/a.txt/below'),
      () => driver.readlink!('dir/a.txt'),
      () => driver.readlink!('missing'),
    ];
    for (const call of refused) await expect(call()).rejects.toThrow(/^strict driver memory: /);
    expect(reported).toHaveLength(refused.length);
    // Within them: a file or a link to one, a missing path in a directory or a link to one, a link.
    await driver.setExecutable!('file-link', true);
    await driver.symlink!('a.txt', 'dir-link/again');
    expect(await driver.readlink!('dir/again')).toBe('a.txt');
    expect((await driver.stat('dir/a.txt')).executable).toBe(true);
    expect(reported).toHaveLength(refused.length);
  });

  it('refuses `executable` in a write to a driver without executable bits', async () => {
    const reported: string[] = [];
    const driver = strictDriver(kvDriver(), (message) => reported.push(message));
    await expect(driver.writeFile('f', new Uint8Array(1), { mode: 'create', executable: false })).rejects.toThrow(/no setExecutable/);
    expect(reported).toHaveLength(1);
    expect(await driver.kind('f')).toBeUndefined();
  });

  it('keeps what the driver lacks absent, so the shared layer still takes its defaults', () => {
    const driver = strictDriver(kvDriver());
    expect([driver.move, driver.copy, driver.openFile, driver.writeFiles]).toEqual([undefined, undefined, undefined, undefined]);
    expect([driver.setExecutable, driver.symlink, driver.readlink]).toEqual([undefined, undefined, undefined]);
  });
});
