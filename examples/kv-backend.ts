// A complete third backend in one file: a workspace over a key-value store (here a Map; a Redis hash, a
// SQLite table or DynamoDB would look the same). The driver stores one value per path and implements the
// ten primitives; `createWorkspace` adds everything else: path rules, limits, errors, locking, glob/grep and
// content-addressed snapshots. With `fileKinds: true` it also keeps executable bits and symlinks (the three
// optional primitives), following links inside the store with `resolveLinks`. It passes
// `describeWorkspaceCompliance` both ways (test/protocol/kv.compliance.test.ts).
import { fileURLToPath } from 'node:url';
import { createWorkspace, type BackendDriver, type CreateWorkspaceOptions, type DriverEntryKind } from 'sessionfs';
import { resolveLinks, type LinkTree } from 'sessionfs/workspace';

/**
 * One value per path: a file's bytes (and, with file kinds, its executable bit), a directory marker (so
 * empty directories exist), or, with file kinds, a symlink's target text.
 */
export type KvValue =
  | { kind: 'file'; bytes: Uint8Array; modifiedAt: Date; executable?: boolean }
  | { kind: 'directory'; modifiedAt: Date }
  | { kind: 'symlink'; target: string; modifiedAt: Date };

/** The store: `''` is the root directory; every other key is a normalised relative path. */
export type KvStore = Map<string, KvValue>;

export interface KvDriverOptions {
  /** Where the values live (default: a new Map). */
  store?: KvStore;
  /** Keep executable bits and symlinks (default false: the workspace answers `NotSupportedError` for them). */
  fileKinds?: boolean;
}

/** Driver errors carry a Node-style `code`; the shared layer turns them into WorkspaceErrors. */
function fail(code: 'ENOENT' | 'EISDIR' | 'ENOTDIR' | 'EINVAL', path: string): Error {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}

const parentOf = (path: string): string => path.slice(0, Math.max(0, path.lastIndexOf('/')));
const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const isBelow = (path: string, base: string): boolean => path !== base && (base === '' || path.startsWith(`${base}/`));

export function kvDriver(options: KvDriverOptions = {}): BackendDriver {
  const unknown = Object.keys(options).filter((key) => key !== 'store' && key !== 'fileKinds');
  if (unknown.length > 0) throw new TypeError(`kvDriver does not take ${unknown.join(', ')}`);
  const { store = new Map(), fileKinds = false } = options;
  if (!store.has('')) store.set('', { kind: 'directory', modifiedAt: new Date() });

  // The store as `resolveLinks` walks it: a node is its key. Links are followed inside the store only
  // (a target leaving it is EACCES, a loop ELOOP); without file kinds there are no links to follow.
  const tree: LinkTree<string> = {
    root: '',
    child: (directory, name) => {
      const key = directory === '' ? name : `${directory}/${name}`;
      return store.has(key) ? key : undefined;
    },
    kind: (key) => (store.get(key) as KvValue).kind,
    target: (key) => {
      const value = store.get(key);
      return value?.kind === 'symlink' ? value.target : '';
    },
  };
  /** The key a path leads to (its final link followed when `followFinal`). */
  const keyOf = (path: string, followFinal = true): string => (fileKinds ? resolveLinks(tree, path, followFinal).path : path);

  const file = (path: string): Extract<KvValue, { kind: 'file' }> => {
    const value = store.get(keyOf(path));
    if (value === undefined || value.kind === 'symlink') throw fail('ENOENT', path);
    if (value.kind === 'directory') throw fail('EISDIR', path);
    return value;
  };
  const entry = (path: string): KvValue => {
    const value = store.get(keyOf(path));
    if (value === undefined) throw fail('ENOENT', path);
    return value;
  };

  const driver: BackendDriver = {
    name: 'kv',

    async readFile(path, { offset, length }) {
      const { bytes } = file(path);
      // A view of the stored bytes is enough: the shared layer copies what a caller gets, and stored
      // bytes are never changed in place.
      const content = bytes.subarray(offset, length === undefined ? undefined : offset + length);
      return { content, sizeBytes: bytes.byteLength };
    },

    async writeFile(path, bytes, { mode, executable }) {
      // `bytes` are the driver's own (the shared layer copied the caller's): kept as they are. Through a
      // link, the target is written (a dangling link's target is created).
      const key = keyOf(path);
      const before = store.get(key);
      const existing = before?.kind === 'file' ? before : undefined;
      let next = bytes;
      if (mode === 'append' && existing !== undefined) {
        next = new Uint8Array(existing.bytes.byteLength + bytes.byteLength);
        next.set(existing.bytes, 0);
        next.set(bytes, existing.bytes.byteLength);
      }
      store.set(key, { kind: 'file', bytes: next, modifiedAt: new Date(), executable: executable ?? existing?.executable ?? false });
    },

    async kind(path): Promise<DriverEntryKind | undefined> {
      try {
        return store.get(keyOf(path, false))?.kind;
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOTDIR') return undefined; // below a file: nothing there
        throw error;
      }
    },

    async stat(path) {
      const own = store.get(keyOf(path, false));
      if (own === undefined) throw fail('ENOENT', path);
      const isSymlink = own.kind === 'symlink';
      const value = isSymlink ? store.get(keyOf(path)) : own;
      if (value === undefined || value.kind === 'symlink')
        // A dangling link (inside the store) is reported as the link itself.
        return { isFile: false, isDirectory: false, isSymlink, sizeBytes: 0, modifiedAt: own.modifiedAt };
      const isFile = value.kind === 'file';
      const sizeBytes = isFile ? value.bytes.byteLength : 0;
      const executable = isFile && value.executable === true;
      return { isFile, isDirectory: !isFile, isSymlink, sizeBytes, modifiedAt: value.modifiedAt, ...(fileKinds ? { executable } : {}) };
    },

    async list(path) {
      const key = keyOf(path);
      if (entry(path).kind !== 'directory') throw fail('ENOTDIR', path);
      const children = [...store].filter(([child]) => child !== '' && parentOf(child) === key);
      return children.map(([child, value]) => ({ name: nameOf(child), kind: value.kind }));
    },

    async *walk(base) {
      // Keys are read once up front, so writes during the walk cannot disturb it; spelled under `base`
      // even when `base` is reached through a link.
      const key = keyOf(base);
      const spelled = (child: string): string => (key === '' ? (base === '' ? child : `${base}/${child}`) : base + child.slice(key.length));
      for (const [child, value] of [...store]) if (isBelow(child, key)) yield { path: spelled(child), kind: value.kind };
    },

    async mkdir(path) {
      const segments = keyOf(path).split('/');
      for (let depth = 1; depth <= segments.length; depth += 1) {
        const prefix = segments.slice(0, depth).join('/');
        if (!store.has(prefix)) store.set(prefix, { kind: 'directory', modifiedAt: new Date() });
      }
    },

    async remove(path) {
      // The shared layer refused a missing path, and a non-empty directory without `recursive`, already.
      // A link is removed itself, never its target.
      const key = keyOf(path, false);
      for (const child of [...store.keys()]) if (child === key || isBelow(child, key)) store.delete(child);
    },
  };
  if (!fileKinds) return driver;

  // The optional primitives: the shared layer checked their preconditions (an existing file or a link to
  // one; a missing path in a directory; a link).
  return {
    ...driver,
    async setExecutable(path, executable) {
      const value = file(path);
      store.set(keyOf(path), { ...value, executable, modifiedAt: new Date() });
    },
    async symlink(target, path) {
      store.set(keyOf(path, false), { kind: 'symlink', target, modifiedAt: new Date() });
    },
    // The real path an access reaches: a policy judges that, and versions follow the target through a link.
    async resolve(path) {
      return keyOf(path);
    },
    async readlink(path) {
      const value = store.get(keyOf(path, false));
      if (value?.kind !== 'symlink') throw fail('EINVAL', path);
      return value.target;
    },
  };
}

/** A full `SnapshotableWorkspace` over a key-value store. */
export function createKvWorkspace(options: CreateWorkspaceOptions = {}, driverOptions: KvDriverOptions = {}) {
  return createWorkspace(kvDriver(driverOptions), options);
}

// Run as a script (`node kv-backend.mjs`): a short tour of what the shared layer adds.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const store: KvStore = new Map();
  const workspace = createKvWorkspace({}, { store, fileKinds: true });
  await workspace.write('src/index.ts', 'export const answer = 42;\n');
  const before = await workspace.snapshot({ tag: 'before' });
  await workspace.write('src/index.ts', 'export const answer = 0;\n');
  await workspace.delete('src', { recursive: true });
  await workspace.restore(before);
  const matches = await workspace.grep('answer', { glob: '**/*.ts' });
  if (matches.length !== 1 || matches[0]?.lineContent !== 'export const answer = 42;')
    throw new Error('restore did not bring the file back');
  console.log(`${store.size} keys; snapshot ${before.ref.slice(0, 15)}…; grep found ${matches[0].path}:${matches[0].lineNumber}`);
  await workspace.dispose();
}
