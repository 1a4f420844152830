import type {
  BackendDriver,
  DriverEntryKind,
  DriverListEntry,
  DriverStat,
  DriverWalkEntry,
  DriverWriteOptions,
} from '../../workspace/driver.js';
import { FileExistsError, FileNotFoundError, InvalidArgumentError, IsADirectoryError, NotADirectoryError } from '../../workspace/errors.js';
import { guessMimeType } from '../../workspace/mime.js';
import { displayPath, joinPath, splitPath, type NormalizedPath } from '../../workspace/paths.js';
import { PersistentMap } from '../../snapshots/persistent-map.js';
import { hostError, type PinnedDir, type Resolved } from '../../host-files/sandbox.js';
import { statFromHost } from '../../host-files/stat.js';
import { lowerExecutable, type LowerEntry, type LowerLayer } from './lower.js';
import { OverlaySnapshotter } from './snapshots.js';
import { setUpper, upperDirectory, WHITEOUT, type UpperDirectory, type UpperFile, type UpperNode } from './upper.js';
import { OverlayView, type MergedEntry } from './view.js';

/**
 * The overlay backend's driver: a host directory read lazily (the lower layer, never written) under a
 * persistent in-memory upper layer holding every write, directory and deletion (whiteout). Every primitive
 * resolves its path through the merged tree with the host sandbox's rules; a mutation computes a new upper
 * root and swaps it in at once, so a failure changes nothing and a snapshot is a reference to a root.
 */
export class OverlayDriver implements BackendDriver {
  readonly name = 'overlay';
  readonly root = '/';
  readonly lower: LowerLayer;
  readonly snapshots: OverlaySnapshotter;
  upper: UpperDirectory = upperDirectory(false, Date.now());
  /**
   * The last version handed out: upper files take the next number on each write, copy or move of a lower
   * file, so a restore brings a version back with its contents and no number names two contents. Lower
   * files are version 0: one that changes on disk is refused (`ConflictError`), never shown changed.
   */
  #clock = 0;

  constructor(lower: LowerLayer) {
    this.lower = lower;
    this.snapshots = new OverlaySnapshotter(this);
  }

  /** The merged tree as it is now. */
  view(): OverlayView {
    return new OverlayView(this.lower, this.upper);
  }

  #resolve(path: NormalizedPath, followFinal: boolean, view = this.view()): Resolved<MergedEntry> {
    try {
      return view.resolve(path, followFinal);
    } catch (error) {
      throw hostError(error, path);
    }
  }

  async resolve(path: NormalizedPath): Promise<NormalizedPath> {
    return this.#resolve(path, true).rel;
  }

  // ---- reading ----------------------------------------------------------------------------------------

  async readFile(path: NormalizedPath, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    const { rel, stat: entry } = this.#resolve(path, true);
    if (entry === undefined) throw new FileNotFoundError(displayPath(path));
    if (entry.kind === 'directory') throw new IsADirectoryError(displayPath(path));
    if (entry.upper?.type === 'file') {
      const content = entry.upper.content;
      const end = range.length === undefined ? content.byteLength : range.offset + range.length;
      // A view, never changed in place: the shared layer copies before a caller sees it.
      return { content: content.subarray(range.offset, end), sizeBytes: content.byteLength };
    }
    return this.lower.readFile(rel, range);
  }

  async kind(path: NormalizedPath): Promise<DriverEntryKind | undefined> {
    try {
      return this.#resolve(path, false).stat?.kind;
    } catch (error) {
      if (error instanceof NotADirectoryError) return undefined;
      throw error;
    }
  }

  async stat(path: NormalizedPath): Promise<DriverStat> {
    const view = this.view();
    const entry = this.#resolve(path, false, view);
    if (entry.stat === undefined) throw new FileNotFoundError(displayPath(path));
    const isSymlink = entry.stat.kind === 'symlink';
    const target = isSymlink ? this.#resolve(path, true, view) : entry;
    // A dangling link (inside the root) is reported as the link itself.
    const { rel, stat } = target.stat === undefined ? entry : target;
    const found = stat as MergedEntry;
    const upper = found.upper;
    if (upper?.type === 'file')
      return {
        isFile: true,
        isDirectory: false,
        isSymlink,
        sizeBytes: upper.content.byteLength,
        createdAt: new Date(upper.createdAt),
        modifiedAt: new Date(upper.modifiedAt),
        mimeType: upper.mimeType,
        version: upper.version,
        executable: upper.executable,
      };
    if (upper !== undefined) {
      const modifiedAt = upper.type === 'directory' ? upper.modifiedAt : upper.createdAt;
      return {
        isFile: false,
        isDirectory: upper.type === 'directory',
        isSymlink,
        sizeBytes: 0,
        createdAt: new Date(upper.createdAt),
        modifiedAt: new Date(modifiedAt),
      };
    }
    this.lower.checkUnchanged(rel);
    const st = found.lowerStat ?? view.lower.entry(rel, 0)?.stat;
    if (st === undefined) throw new FileNotFoundError(displayPath(path));
    const isFile = !st.isDirectory() && !st.isSymbolicLink();
    return { ...statFromHost(path, st, isFile, isSymlink, 0), executable: isFile && lowerExecutable(st) };
  }

  async readlink(path: NormalizedPath): Promise<string> {
    const view = this.view();
    const { rel, stat: entry } = this.#resolve(path, false, view);
    if (entry === undefined) throw new FileNotFoundError(displayPath(path));
    if (entry.kind !== 'symlink') throw new InvalidArgumentError(`not a symlink: ${displayPath(path)}`, displayPath(path));
    try {
      return view.readlink(rel);
    } catch (error) {
      throw hostError(error, path);
    }
  }

  async list(path: NormalizedPath): Promise<DriverListEntry[]> {
    const view = this.view();
    const { rel, stat: entry } = this.#resolve(path, true, view);
    if (entry === undefined) throw new FileNotFoundError(displayPath(path));
    if (entry.kind !== 'directory') throw new NotADirectoryError(displayPath(path));
    return (await view.children(rel, entry)).map(([name, child]) => ({ name, kind: child.kind }));
  }

  async *walk(base: NormalizedPath): AsyncIterable<DriverWalkEntry> {
    const view = this.view();
    let start: Resolved<MergedEntry>;
    try {
      start = this.#resolve(base, false, view);
    } catch (error) {
      if (error instanceof FileNotFoundError || error instanceof NotADirectoryError) return;
      throw error;
    }
    if (start.stat?.kind !== 'directory') return;
    yield* view.walk(start.rel, base, start.stat);
  }

  /** A lower directory the upper layer holds nothing of is searched at disk speed by the search workers. */
  pinSearchDirectory(path: NormalizedPath): PinnedDir | undefined {
    // The common case first: nothing of the upper layer on the way, and no link (the pin proves it).
    const first = splitPath(path)[0];
    const untouched = first === undefined ? this.upper.children.size === 0 : !this.upper.children.has(first);
    if (untouched && !this.upper.opaque) {
      const pin = this.lower.pinExactly(path);
      if (pin !== undefined) return pin;
    }
    try {
      const { rel, stat: entry } = this.#resolve(path, true);
      return entry?.kind === 'directory' && entry.upper === undefined ? this.lower.pin(rel) : undefined;
    } catch {
      return undefined;
    }
  }

  // ---- writing ----------------------------------------------------------------------------------------

  /** Swaps in the upper root `change` computes from the current one (`now` for the times it sets). */
  #apply(change: (upper: UpperDirectory, view: OverlayView, now: number) => UpperDirectory): void {
    const now = Date.now();
    this.upper = change(this.upper, this.view(), now);
  }

  /** A missing upper directory on the way to a path: see-through where the lower layer has a directory there. */
  #directoryMaker(view: OverlayView, segments: readonly string[], now: number): (depth: number) => UpperDirectory {
    return (depth) => {
      const found = view.entry(segments.slice(0, depth).join('/'));
      return upperDirectory(!(found?.kind === 'directory' && found.through), now);
    };
  }

  #set(upper: UpperDirectory, view: OverlayView, rel: NormalizedPath, node: UpperNode | undefined, now: number): UpperDirectory {
    if (rel === '') throw new InvalidArgumentError('cannot replace the workspace root', '/');
    const segments = splitPath(rel);
    return setUpper(upper, segments, () => node, this.#directoryMaker(view, segments, now), now);
  }

  async writeFile(path: NormalizedPath, bytes: Uint8Array, options: DriverWriteOptions): Promise<void> {
    const shown = displayPath(path);
    const { rel, stat: entry } = this.#resolve(path, true);
    if (entry?.kind === 'directory') throw new IsADirectoryError(shown);
    if (entry !== undefined && options.mode === 'create') throw new FileExistsError(shown);
    const incoming = bytes; // the shared layer's copy, nobody else's: kept as it is
    let existing: Pick<UpperFile, 'content' | 'executable' | 'createdAt' | 'mimeType'> | undefined;
    if (entry?.upper?.type === 'file') existing = entry.upper;
    else if (entry !== undefined) {
      const lower = this.#lowerFile(rel);
      await this.lower.remember(rel, 'file');
      const content = options.mode === 'append' ? (await this.lower.readFile(rel, { offset: 0 })).content : new Uint8Array();
      existing = {
        content,
        executable: lowerExecutable(lower.stat),
        createdAt: lower.stat.birthtimeMs,
        mimeType: guessMimeType(rel),
      };
    }
    let content = incoming;
    if (options.mode === 'append' && existing !== undefined) {
      content = new Uint8Array(existing.content.byteLength + incoming.byteLength);
      content.set(existing.content, 0);
      content.set(incoming, existing.content.byteLength);
    }
    this.#apply((upper, view, now) => {
      const file: UpperFile = {
        type: 'file',
        content,
        executable: options.executable ?? existing?.executable ?? false,
        createdAt: existing?.createdAt ?? now,
        modifiedAt: now,
        version: ++this.#clock,
        mimeType: options.mimeType ?? existing?.mimeType ?? guessMimeType(rel),
      };
      return this.#set(upper, view, rel, file, now);
    });
  }

  /** A lower file is copied up with the bit changed. A file that already has the bit asked for does not change. */
  async setExecutable(path: NormalizedPath, executable: boolean): Promise<void> {
    const shown = displayPath(path);
    const { rel, stat: entry } = this.#resolve(path, true);
    if (entry === undefined) throw new FileNotFoundError(shown);
    if (entry.kind === 'directory') throw new IsADirectoryError(shown);
    let file: UpperFile;
    if (entry.upper?.type === 'file') file = entry.upper;
    else {
      const lower = this.#lowerFile(rel);
      if (lowerExecutable(lower.stat) === executable) return;
      await this.lower.remember(rel, 'file');
      file = await this.#copyUp(rel, lower);
    }
    if (file.executable === executable) return;
    this.#apply((upper, view, now) => {
      const changed: UpperFile = { ...file, executable, modifiedAt: now, version: ++this.#clock };
      return this.#set(upper, view, rel, changed, now);
    });
  }

  async symlink(target: string, path: NormalizedPath): Promise<void> {
    const { rel, stat: entry } = this.#resolve(path, false);
    if (entry !== undefined) throw new FileExistsError(displayPath(path));
    this.#apply((upper, view, now) => this.#set(upper, view, rel, { type: 'symlink', target, createdAt: now }, now));
  }

  async mkdir(path: NormalizedPath): Promise<void> {
    const { rel, stat: entry } = this.#resolve(path, true);
    if (entry !== undefined) {
      if (entry.kind === 'directory') return;
      throw new FileExistsError(displayPath(path));
    }
    // Nothing shows there: the new directory hides whatever the lower layer may hold (or get) at that path.
    this.#apply((upper, view, now) => this.#set(upper, view, rel, upperDirectory(true, now), now));
  }

  async remove(path: NormalizedPath): Promise<void> {
    const { rel, stat: entry } = this.#resolve(path, false);
    if (entry === undefined) throw new FileNotFoundError(displayPath(path));
    if (rel === '') throw new InvalidArgumentError('cannot delete the workspace root', '/');
    if (entry.upper === undefined || (entry.kind === 'directory' && entry.through)) await this.lower.remember(rel, entry.kind);
    this.#apply((upper, view, now) => this.#set(upper, view, rel, view.lowerHas(rel) ? WHITEOUT : undefined, now));
  }

  async move(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const view = this.view();
    const source = this.#resolve(from, false, view);
    const target = this.#resolve(to, false, view);
    if (source.stat === undefined) throw new FileNotFoundError(displayPath(from));
    if (source.rel === '' || target.rel === '') throw new InvalidArgumentError('cannot move the workspace root', '/');
    if (source.rel === target.rel) return;
    const node = await this.#materialize(view, source.rel, source.stat);
    this.#apply((upper, current, now) => {
      const placed = this.#set(upper, current, target.rel, node, now);
      return this.#set(placed, new OverlayView(this.lower, placed), source.rel, current.lowerHas(source.rel) ? WHITEOUT : undefined, now);
    });
  }

  async copy(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const view = this.view();
    const source = this.#resolve(from, false, view);
    const target = this.#resolve(to, false, view);
    if (source.stat === undefined) throw new FileNotFoundError(displayPath(from));
    if (target.rel === '') throw new InvalidArgumentError('cannot copy onto the workspace root', '/');
    const node = await this.#materialize(view, source.rel, source.stat);
    this.#apply((upper, current, now) => {
      // A copied file is a new file; a copied directory shares its subtree, metadata included.
      const copy = node.type === 'file' ? { ...node, createdAt: now, modifiedAt: now, version: ++this.#clock } : node;
      return this.#set(upper, current, target.rel, copy, now);
    });
  }

  /**
   * An entry of the merged tree as a self-contained upper node (what a move or copy places elsewhere): upper
   * nodes as they are (an opaque directory already holds everything it shows), lower files read into
   * memory, lower links kept as links, directories rebuilt opaque.
   */
  async #materialize(view: OverlayView, rel: NormalizedPath, entry: MergedEntry): Promise<UpperNode> {
    const upper = entry.upper;
    if (upper !== undefined && (upper.type !== 'directory' || upper.opaque)) return upper;
    const now = Date.now();
    if (entry.kind === 'directory') {
      let children = PersistentMap.empty<UpperNode>();
      for (const [name, child] of await view.children(rel, entry))
        children = children.set(name, await this.#materialize(view, joinPath(rel, name), child));
      return upperDirectory(true, now, children);
    }
    if (entry.kind === 'symlink') return { type: 'symlink', target: view.readlink(rel), createdAt: now };
    return this.#copyUp(rel, this.#lowerFile(rel));
  }

  /** The lower file at the real path `rel` (a regular file, or `InvalidArgumentError`). */
  #lowerFile(rel: NormalizedPath): LowerEntry {
    const lower = this.lower.entry(rel, splitPath(rel).length - 1);
    if (lower === undefined) throw new FileNotFoundError(displayPath(rel));
    if (lower.kind !== 'file' || !lower.stat.isFile())
      throw new InvalidArgumentError(`not a regular file: ${displayPath(rel)}`, displayPath(rel));
    return lower;
  }

  /** A lower file as an upper one: its bytes read into memory, its bit and times kept, a new version. */
  async #copyUp(rel: NormalizedPath, lower: LowerEntry): Promise<UpperFile> {
    const { content } = await this.lower.readFile(rel, { offset: 0 });
    return {
      type: 'file',
      content,
      executable: lowerExecutable(lower.stat),
      createdAt: lower.stat.birthtimeMs,
      modifiedAt: lower.stat.mtimeMs,
      version: ++this.#clock,
      mimeType: guessMimeType(rel),
    };
  }

  /** Releases the upper layer. */
  async dispose(): Promise<void> {
    this.upper = upperDirectory(false, Date.now());
  }
}
