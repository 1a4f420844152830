import * as fs from 'node:fs';
import { EMPTY_DIR_MARKER, unescapeName } from './git/names.js';
import type { GitStore, TreeEntry } from './git/store.js';
import type { SkippedPath } from '../../workspace/types.js';
import { replaceFileSync, replaceSymlinkSync } from './atomic.js';
import { isTempName, isVisibleName } from '../../host-files/names.js';
import { pinChild, pinDirectory, Sandbox, type PinnedDir } from '../../host-files/sandbox.js';
import { newDir, statKey, type DirNode, type StatCache } from './stat-cache.js';

/**
 * Makes the root hold exactly a snapshot tree, given a stat cache that mirrors the live state (just
 * refreshed by a scan, or trusted in tracked mode). Only entries whose ids differ are touched: equal
 * subtrees are skipped without reading them, and changed files are rewritten through a temp file and a
 * rename, which replaces a link standing at the path instead of writing through it. A directory about to
 * be written into is checked with lstat first, so a directory swapped for a link since the scan is
 * replaced, not followed; it is then pinned by descriptor (see `PinnedDir`) and every write, unlink and
 * rename inside it goes through the pin, so a swap during the restore cannot redirect them either. Excluded paths and names a workspace path cannot express are never touched;
 * a snapshot entry that would need to remove them is skipped and reported.
 */
export class TreeApplier {
  readonly skipped: SkippedPath[] = [];
  /** Set when some directory could not be made exact (the stat cache then needs a full scan). */
  incomplete = false;
  /** The directory being applied (workspace-relative), to say where a failed apply stopped. */
  at = '';
  /** The directories whose content the apply went through (written into, or checked entry by entry). */
  readonly visited: string[] = [];
  readonly #sandbox: Sandbox;
  readonly #store: GitStore;
  readonly #state: StatCache;
  /** Told of each entry written or removed (progress). */
  readonly #changed: (rel: string) => void;
  /** Paths never touched, as excluded ones, but present in snapshots (protected content: see `restoreExcept`). */
  readonly #leavesAlone: ((rel: string, exists: boolean) => boolean) | undefined;

  constructor(
    rootAbs: string,
    store: GitStore,
    state: StatCache,
    changed: (rel: string) => void = () => undefined,
    leavesAlone?: (rel: string, exists: boolean) => boolean,
  ) {
    this.#sandbox = new Sandbox(rootAbs);
    this.#store = store;
    this.#state = state;
    this.#changed = changed;
    this.#leavesAlone = leavesAlone;
  }

  #leftAlone(rel: string, exists = true): boolean {
    return this.#leavesAlone !== undefined && this.#leavesAlone(rel, exists);
  }

  async apply(targetTree: string): Promise<void> {
    const tree = this.#state.tree ?? newDir();
    this.#state.tree = tree;
    await this.#applyDir('', targetTree, tree, undefined);
  }

  /** Returns whether the directory now matches the target exactly. `parent` is the pinned parent (none for the root). */
  async #applyDir(rel: string, targetOid: string, node: DirNode, parent: PinnedDir | undefined): Promise<boolean> {
    if (node.oid === targetOid) return true;
    let pin: PinnedDir;
    if (parent === undefined) pin = pinDirectory(this.#sandbox, '', '');
    else {
      const name = baseName(rel);
      const at = parent.at(name);
      const st = lstatOrUndefined(at);
      if (st === undefined || !st.isDirectory()) {
        // Missing, or a link planted since: replace it with a real directory.
        // unlink, never fs.rm: Node's rm re-checks the path and would empty a directory swapped in meanwhile.
        if (st !== undefined) fs.unlinkSync(at);
        fs.mkdirSync(at);
        node.children.clear();
      }
      pin = pinChild(parent, name, rel);
    }
    try {
      return await this.#applyPinned(rel, targetOid, node, pin);
    } finally {
      pin.release();
    }
  }

  async #applyPinned(rel: string, targetOid: string, node: DirNode, dir: PinnedDir): Promise<boolean> {
    // Forget the directory's tree id before touching anything below it: if the apply fails part way, the
    // cache must not keep claiming the old tree for a directory that now holds something else (the next
    // scan would find every entry matching the cache and reuse the stale id; the next restore would skip it).
    node.oid = undefined;
    this.at = rel;
    this.visited.push(rel);
    const target = new Map<string, TreeEntry>();
    for (const entry of await this.#store.readTree(targetOid)) {
      if (entry.name === EMPTY_DIR_MARKER) continue;
      target.set(unescapeName(entry.name), entry);
    }
    let exact = true;
    for (const [name, child] of [...node.children]) {
      if (target.has(name)) continue;
      const childRel = join(rel, name);
      if (this.#leftAlone(childRel)) {
        this.skipped.push({ path: childRel, reason: LEFT_ALONE });
        exact = false;
        continue;
      }
      if (child.kind === 'dir' ? this.#removeTree(dir, name, childRel) : this.#removeLeaf(dir, name, childRel)) {
        node.children.delete(name);
        this.#changed(childRel);
      } else {
        this.skipped.push({
          path: childRel,
          reason: 'not in the snapshot, but it holds excluded or protected content, which restore never touches',
        });
        exact = false;
      }
    }
    for (const [name, entry] of target) {
      const childRel = join(rel, name);
      if (!isVisibleName(name) || name.includes('/') || name === '.' || name === '..') {
        this.skipped.push({ path: childRel, reason: 'the name cannot be expressed as a workspace path' });
        exact = false;
        continue;
      }
      if (this.#state.isExcluded(childRel)) {
        this.skipped.push({ path: childRel, reason: 'excluded by the workspace' });
        exact = false;
        continue;
      }
      const current = node.children.get(name);
      if (this.#leftAlone(childRel, current !== undefined)) {
        const same = current !== undefined && current.oid === entry.oid && (current.kind === 'dir' || current.mode === entry.mode);
        if (!same) {
          this.skipped.push({ path: childRel, reason: LEFT_ALONE });
          exact = false;
        }
        continue;
      }
      if (entry.mode === '40000') {
        if (current?.kind === 'dir') {
          if (!(await this.#applyDir(childRel, entry.oid, current, dir))) exact = false;
          continue;
        }
        if (current !== undefined) this.#removeLeaf(dir, name, childRel);
        const created = newDir();
        node.children.set(name, created);
        if (!(await this.#applyDir(childRel, entry.oid, created, dir))) exact = false;
        continue;
      }
      if (current !== undefined && current.kind !== 'dir' && current.oid === entry.oid && current.mode === entry.mode) continue;
      if (current?.kind === 'dir') {
        if (!this.#removeTree(dir, name, childRel)) {
          this.skipped.push({ path: childRel, reason: 'a directory holding excluded content stands here' });
          exact = false;
          continue;
        }
        node.children.delete(name);
      }
      const abs = dir.at(name);
      const content = await this.#store.readBlob(entry.oid);
      if (!this.#writeLeaf(dir, name, childRel, entry, content)) {
        // A directory holding excluded content stayed: the cache must not record the entry as written.
        node.children.delete(name);
        exact = false;
        continue;
      }
      this.#changed(childRel);
      const st = fs.lstatSync(abs);
      node.children.set(name, {
        kind: entry.mode === '120000' ? 'link' : 'file',
        mode: entry.mode,
        oid: entry.oid,
        stat: statKey(st),
        // Written just now: a same-size edit within this tick would go unnoticed, so re-hash next scan.
        racy: true,
      });
    }
    node.oid = exact ? targetOid : undefined;
    if (!exact) this.incomplete = true;
    return exact;
  }

  /** Returns false when a directory holding excluded content stands at `rel` and was kept (reported). */
  #writeLeaf(dir: PinnedDir, name: string, rel: string, entry: TreeEntry, content: Buffer): boolean {
    this.at = rel;
    const abs = dir.at(name);
    const write = (): void => {
      if (entry.mode === '120000') replaceSymlinkSync(dir.path, abs, content);
      else replaceFileSync(dir.path, abs, content, entry.mode === '100755' ? 0o755 : 0o644);
    };
    try {
      write();
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // A directory the cache did not know about (tracked mode): clear it, then write.
      if (!this.#removeTree(dir, name, rel)) {
        this.skipped.push({ path: rel, reason: 'a directory holding excluded content stands here' });
        return false;
      }
      write();
      return true;
    }
  }

  #removeLeaf(dir: PinnedDir, name: string, rel: string): boolean {
    try {
      fs.unlinkSync(dir.at(name));
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      if (code === 'EISDIR' || code === 'EPERM') return this.#removeTree(dir, name, rel);
      throw error;
    }
  }

  /** Removes a directory from disk except excluded and unexpressible entries; true when it is gone. */
  #removeTree(parent: PinnedDir, name: string, rel: string): boolean {
    this.at = rel;
    const abs = parent.at(name);
    const st = lstatOrUndefined(abs);
    if (st === undefined) return true;
    if (!st.isDirectory()) {
      fs.unlinkSync(abs);
      return true;
    }
    let kept = false;
    const dir = pinChild(parent, name, rel);
    try {
      for (const dirent of fs.readdirSync(dir.path, { withFileTypes: true })) {
        const childName = dirent.name;
        const childRel = join(rel, childName);
        if ((!isVisibleName(childName) && !isTempName(childName)) || this.#state.isExcluded(childRel)) {
          kept = true;
          continue;
        }
        if (this.#leftAlone(childRel)) {
          this.skipped.push({ path: childRel, reason: LEFT_ALONE });
          kept = true;
          continue;
        }
        const gone = dirent.isDirectory() ? this.#removeTree(dir, childName, childRel) : this.#removeLeaf(dir, childName, childRel);
        if (!gone) kept = true;
      }
    } finally {
      dir.release();
    }
    if (kept) return false;
    fs.rmdirSync(abs);
    return true;
  }
}

const LEFT_ALONE = 'protected: the host provided it, so restore leaves it as it is (see docs/security-model.md)';

function baseName(rel: string): string {
  return rel.slice(rel.lastIndexOf('/') + 1);
}

function join(parent: string, name: string): string {
  return parent === '' ? name : `${parent}/${name}`;
}

function lstatOrUndefined(abs: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(abs);
  } catch {
    return undefined;
  }
}
