import type { BackendDriver, DriverEntryKind, DriverWalkEntry } from './driver.js';
import { FileExistsError, FileNotFoundError, InvalidArgumentError, IsADirectoryError, NotADirectoryError } from './errors.js';
import type { WorkspaceLimits } from './limits.js';
import { assertCreatable, displayPath, isSameOrInside, joinPath, pathDepth, relativeTo, type NormalizedPath } from './paths.js';

/** A rename or copy whose checks passed. */
export interface TransferPlan {
  source: NormalizedPath;
  target: NormalizedPath;
  sourceKind: DriverEntryKind;
  targetKind: DriverEntryKind | undefined;
}

interface TransferChecks {
  kind(path: NormalizedPath): Promise<DriverEntryKind | undefined>;
  walk(path: NormalizedPath): AsyncIterable<DriverWalkEntry>;
}

/** The checks `rename` and `copy` share; `undefined` when there is nothing to do (a path moved onto itself). */
export async function planTransfer(
  checks: TransferChecks,
  limits: Readonly<WorkspaceLimits>,
  verb: 'move' | 'copy',
  source: NormalizedPath,
  target: NormalizedPath,
  overwrite: boolean,
  recursive: boolean,
): Promise<TransferPlan | undefined> {
  if (source === '') throw new InvalidArgumentError(`cannot ${verb} the workspace root`, '/');
  if (target === '') throw new InvalidArgumentError(`cannot ${verb} onto the workspace root`, '/');
  const sourceKind = await checks.kind(source);
  if (sourceKind === undefined) throw new FileNotFoundError(displayPath(source));
  if (sourceKind === 'directory' && !recursive) {
    throw new IsADirectoryError(displayPath(source), `is a directory: ${displayPath(source)} (pass recursive: true to copy a directory)`);
  }
  if (source === target) {
    if (verb === 'move') return undefined;
    throw new FileExistsError(displayPath(target), `cannot copy a path onto itself: ${displayPath(target)}`);
  }
  if (isSameOrInside(target, source)) {
    if (sourceKind !== 'directory') throw new NotADirectoryError(displayPath(source), `not a directory: ${displayPath(source)} is a file`);
    throw new InvalidArgumentError(
      `cannot ${verb} a directory into itself: ${displayPath(source)} -> ${displayPath(target)}`,
      displayPath(target),
    );
  }
  if (isSameOrInside(source, target)) {
    // Replacing a directory by something it holds: rename(2) refuses it, and so do we on every backend.
    throw new InvalidArgumentError(
      `cannot ${verb} a path onto a directory that holds it: ${displayPath(source)} -> ${displayPath(target)}`,
      displayPath(target),
    );
  }
  const targetKind = await checks.kind(target);
  if (targetKind !== undefined) {
    if (!overwrite)
      throw new FileExistsError(displayPath(target), `already exists: ${displayPath(target)} (pass overwrite: true to replace it)`);
    if (sourceKind === 'directory' && targetKind !== 'directory')
      throw new NotADirectoryError(displayPath(target), `cannot replace a file with a directory: ${displayPath(target)}`);
    if (sourceKind !== 'directory' && targetKind === 'directory')
      throw new IsADirectoryError(displayPath(target), `cannot replace a directory with a file: ${displayPath(target)}`);
  }
  let extraDepth = 0;
  if (sourceKind === 'directory') {
    const base = pathDepth(source);
    for await (const entry of checks.walk(source)) extraDepth = Math.max(extraDepth, pathDepth(entry.path) - base);
  }
  assertCreatable(target, limits, extraDepth);
  return { source, target, sourceKind, targetKind };
}

/** Carries out a checked plan with the driver's own `move`/`copy`, or entry by entry when it has none. */
export async function transfer(driver: BackendDriver, verb: 'move' | 'copy', plan: TransferPlan): Promise<void> {
  if (verb === 'move' && driver.move !== undefined) return driver.move(plan.source, plan.target);
  if (driver.copy !== undefined) await driver.copy(plan.source, plan.target);
  else await copyEntryByEntry(driver, plan);
  if (verb === 'move') await driver.remove(plan.source, { recursive: true });
}

/**
 * The default copy: files through `readFile`/`writeFile` (with their executable bit, on a driver with
 * `setExecutable`), directories through `mkdir`, links through `readlink`/`symlink` (a driver without them
 * cannot copy one: refused before the first write). What the copy replaces goes first, unless bytes simply
 * overwrite a file (a link there is replaced, never written through).
 */
async function copyEntryByEntry(driver: BackendDriver, { source, target, sourceKind, targetKind }: TransferPlan): Promise<void> {
  const entries: DriverWalkEntry[] = [{ path: source, kind: sourceKind }];
  if (sourceKind === 'directory') for await (const entry of driver.walk(source)) entries.push(entry);
  const { readlink, symlink } = driver;
  const link = entries.find((entry) => entry.kind === 'symlink');
  if (link !== undefined && (readlink === undefined || symlink === undefined))
    throw new InvalidArgumentError(`this backend cannot copy a symbolic link: ${displayPath(link.path)}`, displayPath(link.path));
  const kinds = driver.setExecutable !== undefined;
  // Parents before children.
  entries.sort((a, b) => pathDepth(a.path) - pathDepth(b.path));
  if (targetKind !== undefined && (sourceKind !== 'file' || targetKind !== 'file')) await driver.remove(target, { recursive: true });
  for (const entry of entries) {
    const destination = entry.path === source ? target : joinPath(target, relativeTo(entry.path, source));
    if (entry.kind === 'directory') await driver.mkdir(destination);
    else if (entry.kind === 'symlink') {
      const linkTarget = await (readlink as NonNullable<typeof readlink>).call(driver, entry.path);
      await (symlink as NonNullable<typeof symlink>).call(driver, linkTarget, destination);
    } else {
      const { content } = await driver.readFile(entry.path, { offset: 0 });
      const executable = kinds ? { executable: (await driver.stat(entry.path)).executable === true } : {};
      await driver.writeFile(destination, content, { mode: 'overwrite', ...executable });
    }
  }
}
