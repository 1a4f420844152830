import type { BackendDriver, DriverEntryKind, DriverStagedFile, DriverWalkEntry, DriverWriteOptions } from '../workspace/driver.js';
import { driverWith } from '../workspace/driver-proxy.js';
import { parentPath as parentOf, type NormalizedPath } from '../workspace/paths.js';

/** Where a strict driver reports a call made outside its preconditions. */
export type StrictViolationSink = (message: string) => void;

/**
 * A driver held to the preconditions docs/writing-a-backend.md promises every driver: a call made outside
 * them is reported to `onViolation` and fails with a plain `Error` (no Node `code`, so the shared layer can
 * only call it a backend error, and the test that made it fails). Run the compliance suite over
 * `createWorkspace(strictDriver(yourDriver))` to see that the shared layer never asks your driver for what
 * the docs say it will not. Each check asks the wrapped driver's `kind()`, which has no precondition.
 *
 * A caller that swallows the failure (a lookup answered "absent" on any error) still leaves the report in
 * `onViolation`; check that it stayed empty after each test.
 */
export function strictDriver(driver: BackendDriver, onViolation: StrictViolationSink = () => undefined): BackendDriver {
  const kind = (path: NormalizedPath): Promise<DriverEntryKind | undefined> => driver.kind(path);
  const refuse = (message: string): never => {
    const full = `strict driver ${driver.name}: ${message}`;
    onViolation(full);
    throw new Error(full);
  };
  const expectKinds = async (call: string, path: NormalizedPath, allowed: readonly DriverEntryKind[]): Promise<void> => {
    const found = await kind(path);
    if (found === undefined || !allowed.includes(found))
      refuse(`${call}('${path}') on ${found === undefined ? 'a missing path' : `a ${found}`}; promised: ${allowed.join(' or ')}`);
  };
  /** The parent of a path about to be written or created is a directory (or a link the driver resolves). */
  const expectParent = async (call: string, path: NormalizedPath): Promise<void> => {
    if (path === '') refuse(`${call}('') on the root`);
    await expectKinds(`${call}: parent of`, parentOf(path), ['directory', 'symlink']);
  };
  const expectWritable = async (call: string, path: NormalizedPath, { mode, executable }: DriverWriteOptions): Promise<void> => {
    await expectParent(call, path);
    const found = await kind(path);
    if (found === 'directory') refuse(`${call}('${path}') on a directory`);
    if (mode === 'create' && found !== undefined) refuse(`${call}('${path}', create) on an existing ${found}`);
    if (executable !== undefined && driver.setExecutable === undefined)
      refuse(`${call}('${path}') with executable, but the driver has no setExecutable`);
  };
  /** A path that is a `wanted` itself, or a link the driver resolves to one. */
  const expectThrough = async (call: string, path: NormalizedPath, wanted: 'file' | 'directory'): Promise<void> => {
    const found = await kind(path);
    const resolved = found === 'symlink' ? await driver.stat(path) : undefined;
    const ok = found === wanted || (resolved !== undefined && (wanted === 'file' ? resolved.isFile : resolved.isDirectory));
    if (!ok)
      refuse(`${call}('${path}') on ${found === undefined ? 'a missing path' : `a ${found}`}; promised: a ${wanted} or a link to one`);
  };
  /** `to` of a move or copy: its parent exists; an existing `to` is of the source's kind. */
  const expectTransfer = async (call: string, from: NormalizedPath, to: NormalizedPath): Promise<void> => {
    await expectKinds(call, from, ['file', 'directory', 'symlink']);
    await expectParent(call, to);
    const [source, target] = [await kind(from), await kind(to)];
    if (target !== undefined && target !== source) refuse(`${call}('${from}', '${to}') over a ${target} with a ${source}`);
  };

  const overrides: Partial<Record<keyof BackendDriver, unknown>> = {
    async readFile(path: NormalizedPath, range: { offset: number; length?: number }) {
      await expectKinds('readFile', path, ['file', 'symlink']);
      return driver.readFile(path, range);
    },
    async writeFile(path: NormalizedPath, bytes: Uint8Array, options: DriverWriteOptions) {
      await expectWritable('writeFile', path, options);
      return driver.writeFile(path, bytes, options);
    },
    async stat(path: NormalizedPath) {
      await expectKinds('stat', path, ['file', 'directory', 'symlink']);
      return driver.stat(path);
    },
    async list(path: NormalizedPath) {
      await expectKinds('list', path, ['directory', 'symlink']);
      return driver.list(path);
    },
    walk(base: NormalizedPath): AsyncIterable<DriverWalkEntry> {
      return {
        async *[Symbol.asyncIterator]() {
          await expectKinds('walk', base, ['directory']);
          yield* driver.walk(base);
        },
      };
    },
    async mkdir(path: NormalizedPath) {
      const found = await kind(path);
      if (found !== undefined) refuse(`mkdir('${path}') on an existing ${found}`);
      for (let at = parentOf(path); at !== ''; at = parentOf(at))
        if ((await kind(at)) === 'file') refuse(`mkdir('${path}') below the file ${at}`);
      return driver.mkdir(path);
    },
    async remove(path: NormalizedPath, options: { recursive: boolean }) {
      if (path === '') refuse(`remove('') on the root`);
      const found = await kind(path);
      if (found === undefined) refuse(`remove('${path}') on a missing path`);
      if (found === 'directory' && !options.recursive && (await driver.list(path)).length > 0)
        refuse(`remove('${path}') on a non-empty directory without recursive`);
      return driver.remove(path, options);
    },
  };
  const { move, copy, openFile, commitStaged, setExecutable, symlink, readlink } = driver;
  if (setExecutable !== undefined)
    overrides.setExecutable = async (path: NormalizedPath, executable: boolean) => {
      await expectThrough('setExecutable', path, 'file');
      return setExecutable.call(driver, path, executable);
    };
  if (symlink !== undefined)
    overrides.symlink = async (target: string, path: NormalizedPath) => {
      if (path === '') refuse(`symlink('${target}', '') on the root`);
      const found = await kind(path);
      if (found !== undefined) refuse(`symlink('${target}', '${path}') on an existing ${found}`);
      await expectThrough(`symlink('${target}', …): parent of`, parentOf(path), 'directory');
      return symlink.call(driver, target, path);
    };
  if (readlink !== undefined)
    overrides.readlink = async (path: NormalizedPath) => {
      await expectKinds('readlink', path, ['symlink']);
      return readlink.call(driver, path);
    };
  if (move !== undefined)
    overrides.move = async (from: NormalizedPath, to: NormalizedPath) => {
      await expectTransfer('move', from, to);
      return move.call(driver, from, to);
    };
  if (copy !== undefined)
    overrides.copy = async (from: NormalizedPath, to: NormalizedPath) => {
      await expectTransfer('copy', from, to);
      return copy.call(driver, from, to);
    };
  if (openFile !== undefined)
    overrides.openFile = async (path: NormalizedPath) => {
      await expectKinds('openFile', path, ['file', 'symlink']);
      return openFile.call(driver, path);
    };
  if (commitStaged !== undefined)
    overrides.commitStaged = async (path: NormalizedPath, staged: DriverStagedFile, options: DriverWriteOptions) => {
      await expectWritable('commitStaged', path, options);
      return commitStaged.call(driver, path, staged, options);
    };
  return driverWith(driver, overrides);
}
