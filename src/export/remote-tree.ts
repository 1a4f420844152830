import { EMPTY_DIR_MARKER, escapeName, unescapeName } from '../backends/host/git/names.js';
import type { GitStore, TreeEntry } from '../backends/host/git/store.js';
import type { SnapshotEntry, SnapshotTree } from '../workspace/driver.js';
import { SnapshotRestoreError } from '../workspace/errors.js';
import type { LongCall } from '../workspace/progress.js';

/**
 * Writes a snapshot tree as git trees and blobs in the host snapshot layout (names escaped, an empty
 * directory holding the `%` marker; see git-names.ts); returns the root tree id. With a call, each entry
 * listed is a unit of `read`, then each file or link written one of `write` (`total` known by then).
 */
export async function writeSnapshotTree(store: GitStore, tree: SnapshotTree, call?: LongCall): Promise<string> {
  const children = new Map<string, SnapshotEntry[]>([['', []]]);
  let leaves = 0;
  for await (const entry of tree.entries()) {
    call?.unit('read', entry.path);
    if (entry.kind !== 'directory') leaves += 1;
    const parent = entry.path.includes('/') ? entry.path.slice(0, entry.path.lastIndexOf('/')) : '';
    children.get(parent)?.push(entry);
    if (entry.kind === 'directory') children.set(entry.path, []);
  }
  const write = async (path: string): Promise<string> => {
    const entries: TreeEntry[] = [];
    for (const entry of children.get(path) ?? []) {
      const name = escapeName(entry.path.slice(entry.path.lastIndexOf('/') + 1));
      if (entry.kind === 'directory') entries.push({ name, mode: '40000', oid: await write(entry.path) });
      else {
        const oid = store.writeObject('blob', await entry.bytes());
        call?.unit('write', entry.path);
        const mode = entry.kind === 'symlink' ? '120000' : entry.executable ? '100755' : '100644';
        entries.push({ name, mode, oid });
      }
    }
    if (entries.length === 0 && path !== '') {
      entries.push({ name: EMPTY_DIR_MARKER, mode: '100644', oid: store.writeObject('blob', new Uint8Array()) });
    }
    return store.writeTree(entries);
  };
  call?.report({ phase: 'write', done: call.done, total: call.done + leaves });
  const root = await write('');
  call?.settle();
  return root;
}

const LEAF_MODES = new Set(['100644', '100755', '120000']);

/**
 * Checks a tree fetched from a remote before anything of it is written. A remote is not trusted: a crafted
 * tree can hold entries git itself never writes (`..`, a name with `/`, a submodule, two names that
 * unescape to the same one). Every entry must be one ordinary path component with a file, link or
 * directory mode, so the paths the tree gives can only land inside the workspace.
 */
export async function checkRemoteTree(store: GitStore, tree: string, path = ''): Promise<void> {
  const seen = new Set<string>();
  for (const entry of await store.readTree(tree)) {
    const where = path === '' ? entry.name : `${path}/${entry.name}`;
    if (entry.name === EMPTY_DIR_MARKER && entry.mode === '100644') continue;
    const name = unescapeName(entry.name);
    if (!isComponent(name) || seen.has(name))
      throw new SnapshotRestoreError(`the remote tree holds an entry sessionfs refuses: ${JSON.stringify(where)}`);
    seen.add(name);
    if (entry.mode === '40000') await checkRemoteTree(store, entry.oid, path === '' ? name : `${path}/${name}`);
    else if (!LEAF_MODES.has(entry.mode))
      throw new SnapshotRestoreError(
        `the remote tree holds ${JSON.stringify(where)} with mode ${entry.mode} (not a file, link or directory)`,
      );
  }
}

function isComponent(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\\') && !name.includes('\0');
}
