import * as fs from 'node:fs';
import { EMPTY_DIR_MARKER, unescapeName } from '../../snapshots/git-names.js';
import type { GitStore, TreeEntry } from '../../snapshots/git-store.js';
import type { SkippedPath } from '../../workspace/types.js';
import { isTempName, replaceFileSync, replaceSymlinkSync } from './atomic.js';
import { isVisibleName } from './names.js';
import { newDir, statKey, type DirNode, type SnapshotState } from './state.js';

/**
 * Makes the root hold exactly a snapshot tree, given a stat cache that mirrors the live state (just
 * refreshed by a scan, or trusted in tracked mode). Only entries whose ids differ are touched: equal
 * subtrees are skipped without reading them, and changed files are rewritten through a temp file and a
 * rename, which replaces a link standing at the path instead of writing through it. A directory about to
 * be written into is checked with lstat first, so a directory swapped for a link since the scan is
 * replaced, not followed. Excluded paths and names a workspace path cannot express are never touched;
 * a snapshot entry that would need to remove them is skipped and reported.
 */
export class TreeApplier {
  readonly skipped: SkippedPath[] = [];
  /** Set when some directory could not be made exact (the stat cache then needs a full scan). */
  incomplete = false;
  readonly #rootAbs: string;
  readonly #store: GitStore;
  readonly #state: SnapshotState;

  constructor(rootAbs: string, store: GitStore, state: SnapshotState) {
    this.#rootAbs = rootAbs;
    this.#store = store;
    this.#state = state;
  }

  #abs(rel: string): string {
    return rel === '' ? this.#rootAbs : `${this.#rootAbs}/${rel}`;
  }

  async apply(targetTree: string): Promise<void> {
    const tree = this.#state.tree ?? newDir();
    this.#state.tree = tree;
    await this.#applyDir('', targetTree, tree);
  }

  /** Returns whether the directory now matches the target exactly. */
  async #applyDir(rel: string, targetOid: string, node: DirNode): Promise<boolean> {
    if (node.oid === targetOid) return true;
    const dirAbs = this.#abs(rel);
    if (rel !== '') {
      const st = lstatOrUndefined(dirAbs);
      if (st === undefined || !st.isDirectory()) {
        // Missing, or a link planted since: replace it with a real directory.
        if (st !== undefined) fs.rmSync(dirAbs, { force: true });
        fs.mkdirSync(dirAbs);
        node.children.clear();
      }
    }
    const target = new Map<string, TreeEntry>();
    for (const entry of await this.#store.readTree(targetOid)) {
      if (entry.name === EMPTY_DIR_MARKER) continue;
      target.set(unescapeName(entry.name), entry);
    }
    let exact = true;
    for (const [name, child] of [...node.children]) {
      if (target.has(name)) continue;
      const childRel = join(rel, name);
      if (child.kind === 'dir' ? await this.#removeTree(childRel) : await this.#removeLeaf(childRel)) node.children.delete(name);
      else {
        this.skipped.push({ path: childRel, reason: 'not in the snapshot, but it holds excluded content, which restore never touches' });
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
      if (entry.mode === '40000') {
        if (current?.kind === 'dir') {
          if (!(await this.#applyDir(childRel, entry.oid, current))) exact = false;
          continue;
        }
        if (current !== undefined) await this.#removeLeaf(childRel);
        const dir = newDir();
        node.children.set(name, dir);
        if (!(await this.#applyDir(childRel, entry.oid, dir))) exact = false;
        continue;
      }
      if (current !== undefined && current.kind !== 'dir' && current.oid === entry.oid && current.mode === entry.mode) continue;
      if (current?.kind === 'dir') {
        if (!(await this.#removeTree(childRel))) {
          this.skipped.push({ path: childRel, reason: 'a directory holding excluded content stands here' });
          exact = false;
          continue;
        }
        node.children.delete(name);
      }
      const abs = this.#abs(childRel);
      const content = await this.#store.readBlob(entry.oid);
      if (!(await this.#writeLeaf(dirAbs, abs, childRel, entry, content))) {
        // A directory holding excluded content stayed: the cache must not record the entry as written.
        node.children.delete(name);
        exact = false;
        continue;
      }
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
  async #writeLeaf(dirAbs: string, abs: string, rel: string, entry: TreeEntry, content: Buffer): Promise<boolean> {
    const write = (): void => {
      if (entry.mode === '120000') replaceSymlinkSync(dirAbs, abs, content);
      else replaceFileSync(dirAbs, abs, content, entry.mode === '100755' ? 0o755 : 0o644);
    };
    try {
      write();
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // A directory the cache did not know about (tracked mode): clear it, then write.
      if (!(await this.#removeTree(rel))) {
        this.skipped.push({ path: rel, reason: 'a directory holding excluded content stands here' });
        return false;
      }
      write();
      return true;
    }
  }

  async #removeLeaf(rel: string): Promise<boolean> {
    const abs = this.#abs(rel);
    try {
      fs.unlinkSync(abs);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      if (code === 'EISDIR' || code === 'EPERM') return this.#removeTree(rel);
      throw error;
    }
  }

  /** Removes a directory from disk except excluded and unexpressible entries; true when it is gone. */
  async #removeTree(rel: string): Promise<boolean> {
    const abs = this.#abs(rel);
    const st = lstatOrUndefined(abs);
    if (st === undefined) return true;
    if (!st.isDirectory()) {
      fs.unlinkSync(abs);
      return true;
    }
    let kept = false;
    for (const dirent of fs.readdirSync(abs, { withFileTypes: true })) {
      const name = dirent.name;
      const childRel = join(rel, name);
      if ((!isVisibleName(name) && !isTempName(name)) || this.#state.isExcluded(childRel)) {
        kept = true;
        continue;
      }
      if (dirent.isDirectory()) {
        if (!(await this.#removeTree(childRel))) kept = true;
      } else {
        fs.rmSync(`${abs}/${name}`, { force: true });
      }
    }
    if (kept) return false;
    fs.rmdirSync(abs);
    return true;
  }
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
