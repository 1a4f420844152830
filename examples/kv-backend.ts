// A complete third backend in one file: a workspace over a key-value store (here a Map; a Redis hash, a
// SQLite table or DynamoDB would look the same). The driver stores one value per path and implements the
// ten primitives; `createWorkspace` adds everything else: path rules, limits, errors, locking, glob/grep and
// content-addressed snapshots. It passes `describeWorkspaceCompliance` (test/protocol/kv.compliance.test.ts).
import { fileURLToPath } from 'node:url';
import { createWorkspace, type BackendDriver, type CreateWorkspaceOptions, type DriverEntryKind } from 'sessionfs';

/** One value per path: a file's bytes, or a directory marker (so empty directories exist). */
export type KvValue = { kind: 'file'; bytes: Uint8Array; modifiedAt: Date } | { kind: 'directory'; modifiedAt: Date };

/** The store: `''` is the root directory; every other key is a normalised relative path. */
export type KvStore = Map<string, KvValue>;

/** Driver errors carry a Node-style `code`; the shared layer turns them into WorkspaceErrors. */
function fail(code: 'ENOENT' | 'EISDIR' | 'ENOTDIR', path: string): Error {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}

const parentOf = (path: string): string => path.slice(0, Math.max(0, path.lastIndexOf('/')));
const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const isBelow = (path: string, base: string): boolean => path !== base && (base === '' || path.startsWith(`${base}/`));

export function kvDriver(store: KvStore = new Map()): BackendDriver {
  if (!store.has('')) store.set('', { kind: 'directory', modifiedAt: new Date() });
  const file = (path: string): Uint8Array => {
    const value = store.get(path);
    if (value === undefined) throw fail('ENOENT', path);
    if (value.kind === 'directory') throw fail('EISDIR', path);
    return value.bytes;
  };
  const entry = (path: string): KvValue => {
    const value = store.get(path);
    if (value === undefined) throw fail('ENOENT', path);
    return value;
  };

  return {
    name: 'kv',

    async readFile(path, { offset, length }) {
      const bytes = file(path);
      // A view of the stored bytes is enough: the shared layer copies what a caller gets, and stored
      // bytes are never changed in place.
      const content = bytes.subarray(offset, length === undefined ? undefined : offset + length);
      return { content, sizeBytes: bytes.byteLength };
    },

    async writeFile(path, bytes, { mode }) {
      // `bytes` are the driver's own (the shared layer copied the caller's): kept as they are.
      let next = bytes;
      if (mode === 'append' && store.has(path)) {
        const before = file(path);
        next = new Uint8Array(before.byteLength + bytes.byteLength);
        next.set(before, 0);
        next.set(bytes, before.byteLength);
      }
      store.set(path, { kind: 'file', bytes: next, modifiedAt: new Date() });
    },

    async kind(path): Promise<DriverEntryKind | undefined> {
      return store.get(path)?.kind;
    },

    async stat(path) {
      const value = entry(path);
      const isFile = value.kind === 'file';
      const sizeBytes = isFile ? value.bytes.byteLength : 0;
      return { isFile, isDirectory: !isFile, isSymlink: false, sizeBytes, modifiedAt: value.modifiedAt };
    },

    async list(path) {
      if (entry(path).kind !== 'directory') throw fail('ENOTDIR', path);
      const children = [...store].filter(([key]) => key !== '' && parentOf(key) === path);
      return children.map(([key, value]) => ({ name: nameOf(key), kind: value.kind }));
    },

    async *walk(base) {
      // Keys are read once up front, so writes during the walk cannot disturb it.
      for (const [key, value] of [...store]) if (isBelow(key, base)) yield { path: key, kind: value.kind };
    },

    async mkdir(path) {
      const segments = path.split('/');
      for (let depth = 1; depth <= segments.length; depth += 1) {
        const prefix = segments.slice(0, depth).join('/');
        if (!store.has(prefix)) store.set(prefix, { kind: 'directory', modifiedAt: new Date() });
      }
    },

    async remove(path) {
      // The shared layer refused a missing path, and a non-empty directory without `recursive`, already.
      for (const key of [...store.keys()]) if (key === path || isBelow(key, path)) store.delete(key);
    },
  };
}

/** A full `SnapshotableWorkspace` over a key-value store. */
export function createKvWorkspace(options: CreateWorkspaceOptions = {}, store?: KvStore) {
  return createWorkspace(kvDriver(store), options);
}

// Run as a script (`node kv-backend.mjs`): a short tour of what the shared layer adds.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const store: KvStore = new Map();
  const workspace = createKvWorkspace({}, store);
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
