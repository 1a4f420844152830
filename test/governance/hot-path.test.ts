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

describe('driverWith over another layer', () => {
  it('is one layer with both sets of members, the outer first, everything else forwarded live to the driver itself', async () => {
    class Driver {
      readonly name = 'test';
      async read(): Promise<string> {
        return 'driver';
      }
      async list(): Promise<string> {
        return 'driver list';
      }
      async stat(): Promise<string> {
        return 'driver stat';
      }
    }
    const driver = new Driver();
    const raw = driver as unknown as BackendDriver;
    const inner = driverWith(raw, { stat: async () => `inner over ${await raw.stat('')}`, list: async () => 'inner list' } as never);
    const outer = driverWith(inner, { list: async () => `outer over ${await inner.list('')}` } as never) as unknown as Driver &
      Record<string, unknown>;
    expect(await outer.stat()).toBe('inner over driver stat');
    expect(await outer.list()).toBe('outer over inner list');
    expect(await outer.read()).toBe('driver');
    (driver as unknown as Record<string, unknown>)['read'] = async () => 'replaced';
    expect(await outer.read()).toBe('replaced');
    (driver as unknown as Record<string, unknown>)['late'] = function (this: unknown) {
      return this === driver;
    };
    expect((outer['late'] as () => boolean)()).toBe(true);
    (outer as Record<string, unknown>)['name'] = 'renamed';
    expect(driver.name).toBe('renamed');
    // The inner layer is left as it was.
    expect(await (inner as unknown as Driver).list()).toBe('inner list');
  });
});
