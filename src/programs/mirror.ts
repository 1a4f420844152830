import * as fs from 'node:fs';
import { join } from 'node:path';
import { createOwnedTemp, removeOwnedTemp } from '../backends/host/owned-temp.js';
import { parentPath } from '../workspace/paths.js';
import { releaseSnapshots } from '../workspace/snapshot-queue.js';
import type { SnapshotableWorkspace, SnapshotEntry, SnapshotTree, WorkspaceSnapshot } from '../workspace/types.js';

/**
 * A host directory holding a copy of a workspace that has none of its own (memory, overlay, composed,
 * stored), for programs to see as their lower layer. The first sync writes the whole tree; each later one
 * only what `diff` reports since the snapshot the last sync copied (cost ∝ change). Nothing but this class
 * writes here (the sandbox's overlay never writes its lower layer), so a link the workspace holds is
 * recreated as a link and never followed. Owned like every temp directory: removed by `dispose`, at exit,
 * or by the next process's sweep after a `kill -9`.
 */
export class WorkspaceMirror {
  readonly dir: string;
  #baseline: WorkspaceSnapshot | undefined;

  constructor() {
    this.dir = createOwnedTemp('mirror');
  }

  /** Brings the mirror to the workspace's current state. `owner`: the workspace whose snapshots to release. */
  async sync(workspace: SnapshotableWorkspace, owner: object = workspace): Promise<void> {
    const now = await workspace.snapshot({ tag: 'program mirror' });
    const previous = this.#baseline;
    try {
      const tree = await workspace.snapshotTree(now);
      if (previous === undefined) {
        for await (const entry of tree.entries()) await this.#write(entry);
      } else {
        const changed = await workspace.diff(previous, now);
        for (const { path } of changed) await this.#update(tree, path);
      }
    } catch (error) {
      // A half-done copy is not trusted: the next sync starts over.
      this.#baseline = undefined;
      this.#clear();
      await releaseSnapshots(owner, [now]).catch(() => undefined);
      if (previous !== undefined) await releaseSnapshots(owner, [previous]).catch(() => undefined);
      throw error;
    }
    this.#baseline = now;
    if (previous !== undefined) await releaseSnapshots(owner, [previous]).catch(() => undefined);
  }

  /**
   * Directories a program made or removed, now applied to the workspace: `diff` lists files and links only,
   * so an empty directory would otherwise be missing from the mirror until its first file. (One made by a
   * file tool, or brought back by a rollback, shows once it holds a file: see docs/programs.md.)
   */
  noteDirectories(changes: readonly { kind: string; path: string }[]): void {
    for (const change of changes) {
      if (change.kind === 'directory') {
        const abs = join(this.dir, change.path);
        if (lstatOrUndefined(abs)?.isDirectory() !== true) {
          this.#removeAt(change.path);
          fs.mkdirSync(abs, { recursive: true });
        }
      } else if (change.kind === 'delete' && lstatOrUndefined(join(this.dir, change.path))?.isDirectory() === true) {
        this.#removeAt(change.path);
      }
    }
  }

  dispose(): void {
    removeOwnedTemp(this.dir);
  }

  #clear(): void {
    for (const name of fs.readdirSync(this.dir)) fs.rmSync(join(this.dir, name), { recursive: true, force: true });
  }

  async #update(tree: SnapshotTree, path: string): Promise<void> {
    const entry = await tree.entry(path);
    this.#removeAt(path);
    if (entry !== undefined) {
      await this.#ensureDirectory(parentPath(path));
      await this.#write(entry);
      return;
    }
    // Gone: so are the directories that held only it.
    for (let dir = parentPath(path); dir !== ''; dir = parentPath(dir)) {
      if ((await tree.entry(dir)) !== undefined) break;
      this.#removeAt(dir);
    }
  }

  /** Every component a real directory (a link or file standing in the way is replaced: the tree says so). */
  async #ensureDirectory(path: string): Promise<void> {
    if (path === '') return;
    let at = '';
    for (const name of path.split('/')) {
      at = at === '' ? name : `${at}/${name}`;
      const abs = join(this.dir, at);
      const stat = lstatOrUndefined(abs);
      if (stat?.isDirectory() === true) continue;
      if (stat !== undefined) fs.rmSync(abs, { force: true });
      fs.mkdirSync(abs);
    }
  }

  #removeAt(path: string): void {
    // rmSync never follows a link it meets (it removes the link), and every parent here is a real directory.
    fs.rmSync(join(this.dir, path), { recursive: true, force: true });
  }

  async #write(entry: SnapshotEntry): Promise<void> {
    const abs = join(this.dir, entry.path);
    if (entry.kind === 'directory') {
      if (lstatOrUndefined(abs)?.isDirectory() !== true) fs.mkdirSync(abs);
    } else if (entry.kind === 'symlink') {
      fs.symlinkSync(new TextDecoder().decode(await entry.bytes()), abs);
    } else {
      fs.writeFileSync(abs, await entry.bytes(), { mode: entry.executable ? 0o755 : 0o644, flag: 'wx' });
    }
  }
}

function lstatOrUndefined(path: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(path);
  } catch {
    return undefined;
  }
}
