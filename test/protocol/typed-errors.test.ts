import fc from 'fast-check';
import { WORKSPACE_OPERATIONS } from '../../src/session/queue.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isWorkspaceError } from '../../src/workspace/errors.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { BACKENDS } from '../support/backends.js';

const MiB = 1024 * 1024;
const longName = 'a'.repeat(MiB);

/** Strings a model might send as a path or pattern: ordinary, hostile, huge. */
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    '/',
    '.',
    '..',
    '../x',
    'a/../../b',
    'f.txt',
    'dir',
    'dir/',
    'f.txt/x',
    'link',
    '\u0000',
    'a\\b',
    '**',
    '{',
    '[',
    '(',
  ),
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    longName,
    `dir/${longName}`,
    `f.txt/${longName}`,
    '{'.repeat(65 * 1024),
    'a'.repeat(300),
    Array(5000).fill('d').join('/'),
  ),
);

/** Anything at all where the protocol expects a string, a number, an options object or content. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(undefined, null, true, 0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2, Infinity, 2 ** 53),
  fc.constantFrom([], [1], new Uint8Array([1, 2, 0xff]), () => undefined, Symbol('s'), new Date(0)),
  fc.integer(),
  fc.dictionary(
    fc.constantFrom(
      'offset',
      'limit',
      'recursive',
      'overwrite',
      'parents',
      'path',
      'include',
      'exclude',
      'maxResults',
      'timeoutMs',
      'ignoreCase',
      'tag',
      'ifVersion',
      'contextLines',
      'type',
      'signal',
    ),
    fc.oneof(hostileString, fc.constantFrom(undefined, null, true, false, 0, -5, 1.5, Number.NaN, 1e12, [], {}, ['*'])),
  ),
);

const METHODS = WORKSPACE_OPERATIONS;

describe.each(BACKENDS)('edge input on $name ends as a WorkspaceError', ({ name, create }) => {
  let workspace: SnapshotableWorkspace;
  let rootNames: string[];
  beforeAll(async () => {
    workspace = await create();
    await workspace.write('f.txt', 'one\ntwo\n');
    await workspace.mkdir('dir');
    await workspace.write('dir/g.txt', 'three');
    rootNames = (await workspace.list('/')).map((entry) => entry.name);
  });
  afterAll(async () => {
    await workspace.dispose();
  });

  it.each([
    ['exists on a 1 MiB name', () => workspace.exists(longName), false],
    ['exists below a file on a 1 MiB name', () => workspace.exists(`f.txt/${longName}`), false],
  ])('%s is false', async (_label, run, expected) => {
    expect(await run()).toBe(expected);
  });

  it.each([
    ['stat', () => workspace.stat(longName)],
    ['read', () => workspace.read(longName)],
    ['readBytes', () => workspace.readBytes(longName)],
    ['list', () => workspace.list(longName)],
    ['delete', () => workspace.delete(longName)],
    ['rename from', () => workspace.rename(longName, 'x')],
    ['copy from', () => workspace.copy(longName, 'x')],
  ])('%s of a 1 MiB name is ENOENT, as for any name no entry has', async (_label, run) => {
    await expect(run()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it.each([
    ['write', () => workspace.write(longName, 'x')],
    ['mkdir', () => workspace.mkdir(longName)],
    ['rename to', () => workspace.rename('f.txt', longName)],
    ['copy to', () => workspace.copy('f.txt', longName)],
  ])('%s a 1 MiB name is EFBIG and creates nothing', async (_label, run) => {
    await expect(run()).rejects.toMatchObject({ code: 'EFBIG' });
    expect((await workspace.list('/')).map((entry) => entry.name)).toEqual(rootNames);
  });

  it.each([
    ['a 65 KiB glob pattern', () => workspace.glob('{'.repeat(65 * 1024))],
    ['a 65 KiB grep pattern', () => workspace.grep('('.repeat(65 * 1024))],
    ['a number as options', () => workspace.read('f.txt', 5 as never)],
    ['an array as options', () => workspace.glob('*', [] as never)],
  ])('%s is EINVAL', async (_label, run) => {
    await expect(run()).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('null options count as absent', async () => {
    expect((await workspace.read('f.txt', null as never)).content).toContain('one');
    expect(await workspace.list('dir')).toHaveLength(1);
  });

  it(`every public method, given random hostile arguments, resolves or rejects with a WorkspaceError (${name})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...METHODS), fc.array(anyValue, { maxLength: 3 }), async (method, args) => {
        const call = (workspace[method] as (...a: unknown[]) => Promise<unknown>).bind(workspace);
        let outcome: unknown;
        try {
          await call(...args);
          return;
        } catch (error) {
          outcome = error;
        }
        if (!isWorkspaceError(outcome)) {
          throw new Error(`${method}(${args.map((a) => describeValue(a)).join(', ')}) threw ${String(outcome)}`);
        }
      }),
      { numRuns: 400 },
    );
  }, 120_000);
});

function describeValue(value: unknown): string {
  if (typeof value === 'string') return value.length > 60 ? `<string of ${value.length}>` : JSON.stringify(value);
  if (typeof value === 'symbol' || typeof value === 'function') return String(value);
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 80)}…` : text;
  } catch {
    return String(value);
  }
}
