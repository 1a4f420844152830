import { describe, expect, it } from 'vitest';
import { MemoryDriver } from '../../src/backends/memory/driver.js';
import { Governance } from '../../src/governance/governance.js';
import type { BackendDriver } from '../../src/workspace/driver.js';
import { driverWith } from '../../src/workspace/driver-proxy.js';
import { PolicyError } from '../../src/workspace/errors.js';

describe('the per-operation path of governance', () => {
  it('admits a path without a promise when no I/O can change the verdict, and denies it at once', async () => {
    const driver = new MemoryDriver();
    expect(new Governance(driver, undefined).admit('./a/b.txt', 'file')).toBe('a/b.txt');
    const governed = new Governance(driver, { allow: ['src/**', 'docs/api/**'], deny: ['**/.env'], maxFileBytes: 10 });
    expect(governed.admit('src/a.ts', 'file')).toBe('src/a.ts');
    expect(() => governed.admit('src/.env', 'file')).toThrow(PolicyError);
    // A directory on the way to allowed paths needs to know what is there: that one is asynchronous.
    await driver.mkdir('docs');
    await expect(governed.admit('docs', 'any')).resolves.toBe('docs');
    // A write that only the content's size decides needs no promise either; one that must confirm does.
    expect(typeof governed.beforeWrite('src/a.ts', 'missing', 'overwrite', 5)).toBe('function');
    expect(() => governed.beforeWrite('src/a.ts', 'missing', 'overwrite', 11)).toThrow(/maxFileBytes/);
    const confirming = new Governance(driver, { confirm: () => false });
    await expect(confirming.beforeWrite('src/a.ts', 'existing', 'overwrite', 1)).rejects.toThrow(PolicyError);
  });
});

describe('driverWith', () => {
  it('forwards every member live: replaced and added later, assignments, overrides first, methods bound', async () => {
    class Driver {
      readonly name = 'test';
      #files = new Map<string, string>([['a', 'A']]);
      async read(path: string): Promise<string | undefined> {
        return this.#files.get(path);
      }
    }
    const driver = new Driver();
    const layered = driverWith(driver as unknown as BackendDriver, { root: '/over' }) as unknown as Driver & Record<string, unknown>;
    expect(layered.name).toBe('test');
    expect(layered['root']).toBe('/over');
    const { read } = layered;
    expect(await read('a')).toBe('A');
    expect(layered.read).toBe(layered.read);
    (driver as unknown as Record<string, unknown>)['read'] = async () => 'replaced';
    expect(await layered.read('a')).toBe('replaced');
    (driver as unknown as Record<string, unknown>)['late'] = function (this: unknown) {
      return this === driver;
    };
    expect((layered['late'] as () => boolean)()).toBe(true);
    (layered as Record<string, unknown>)['name'] = 'renamed';
    expect(driver.name).toBe('renamed');
    expect('late' in layered).toBe(true);
  });
});
