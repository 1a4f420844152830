import { manifestReader } from '../snapshots/manifest.js';
import { createGitPatch } from '../snapshots/patch.js';
import { changedPaths, snapshotTree, type TreeChange, type TreeReader } from '../snapshots/snapshot-tree.js';
import type { SessionInfo } from '../store/session-store.js';
import type { BlobStore, SnapshotTree } from '../workspace/driver.js';

/** One file of a session's change, as `diff --stat` shows it. */
export interface FileStat {
  path: string;
  status: TreeChange['status'];
  /** Lines added and removed; both 0 for a binary file. */
  insertions: number;
  deletions: number;
  binary: boolean;
}

/**
 * What a stored session changed since it began: its base tree (the empty tree when it began empty) against
 * its head, both read from the store's blobs through one reader, so unchanged directories are skipped by
 * hash and the cost follows the change.
 */
export class StoredChange {
  readonly from: SnapshotTree;
  readonly to: SnapshotTree;

  constructor(blobs: BlobStore, info: Pick<SessionInfo, 'base' | 'root'>) {
    const reader = emptyAware(manifestReader(blobs));
    this.from = snapshotTree(info.base, reader);
    this.to = snapshotTree(info.root, reader);
  }

  /** The files added, modified and deleted, in path order. */
  changes(): Promise<TreeChange[]> {
    return changedPaths(this.from, this.to);
  }

  /** The git patch (`git apply --binary` applies it to the tree the session began from). */
  patch(): Promise<string> {
    return createGitPatch(this.from, this.to);
  }

  /** Per file: its status and the lines its patch adds and removes. */
  async stat(patch?: string): Promise<FileStat[]> {
    const changes = await this.changes();
    const text = patch ?? (await this.patch());
    // The patch holds one section per changed file, in the same path order as `changes`.
    const sections = text.split(/^(?=diff --git )/m).filter((section) => section.startsWith('diff --git '));
    return changes.map((change, index) => {
      const section = sections.length === changes.length ? (sections[index] ?? '') : '';
      let insertions = 0;
      let deletions = 0;
      for (const line of section.split('\n')) {
        if (line.startsWith('+++ ') || line.startsWith('--- ')) continue;
        if (line.startsWith('+')) insertions += 1;
        else if (line.startsWith('-')) deletions += 1;
      }
      const binary = section.includes('\nGIT binary patch\n');
      return { path: change.path, status: change.status, insertions: binary ? 0 : insertions, deletions: binary ? 0 : deletions, binary };
    });
  }
}

/** A manifest reader for which the directory `undefined` is the empty tree (a session that began empty). */
function emptyAware(reader: TreeReader<string>): TreeReader<string | undefined> {
  return {
    child: async (directory, name) => (directory === undefined ? undefined : reader.child(directory, name)),
    children: async (directory) => (directory === undefined ? [] : reader.children(directory)),
  };
}

/** `git diff --stat`'s lines and summary. */
export function statText(stats: readonly FileStat[]): string {
  if (stats.length === 0) return 'no changes\n';
  const mark = { added: 'A', modified: 'M', deleted: 'D' } as const;
  const width = Math.max(...stats.map((stat) => stat.path.length));
  let out = '';
  for (const stat of stats) {
    const counts = stat.binary ? 'binary' : `+${stat.insertions} -${stat.deletions}`;
    out += `${mark[stat.status]} ${stat.path.padEnd(width)}  ${counts}\n`;
  }
  const insertions = stats.reduce((sum, stat) => sum + stat.insertions, 0);
  const deletions = stats.reduce((sum, stat) => sum + stat.deletions, 0);
  const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
  out += `${plural(stats.length, 'file changed', 'files changed')}, ${plural(insertions, 'insertion(+)', 'insertions(+)')}, ${plural(deletions, 'deletion(-)', 'deletions(-)')}\n`;
  return out;
}
