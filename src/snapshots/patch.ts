import type { SnapshotEntry, SnapshotTree } from '../workspace/driver.js';
import { binaryLiteral, blobOid, isText, NULL_OID, quoteName } from './git-format.js';
import { textHunks } from './patch-hunks.js';
import { changedPaths } from './snapshot-tree.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';

/** A file or symlink as a patch sees it: git's mode, the bytes and their blob id. */
interface Side {
  mode: '100644' | '100755' | '120000';
  bytes: Uint8Array;
  oid: string;
}

/**
 * The git patch (`git diff --binary` format) that turns `from` into `to`: `git apply --binary` applied to
 * the `from` tree gives exactly the `to` tree's files and symlinks. Files are in path order, text as
 * unified hunks with three lines of context (hunks from the `diff` package), binary files and anything
 * that is not UTF-8 as `GIT binary patch` literals, modes as git writes them, names quoted as git quotes
 * them. A path whose kind changes (file ↔ symlink) is a deletion followed by a creation, as git prints it.
 * Deterministic: the same two trees give the same bytes. Empty directories are outside what a patch says.
 * `onProgress` counts changed paths (phase `patch`, `total` known once the trees are compared); `signal`
 * is checked between them.
 */
export async function createGitPatch(from: SnapshotTree, to: SnapshotTree, options?: LongCallOptions): Promise<string> {
  return LongCall.start(options, 'patch').run(async (call) => {
    let out = '';
    const changes = await changedPaths(from, to);
    call.check();
    call.report({ phase: 'patch', done: 0, total: changes.length });
    for (const { path } of changes) {
      out += await pathDiff(from, to, path);
      call.step('patch', path);
    }
    return out;
  });
}

/** One changed path's part of the patch. */
async function pathDiff(from: SnapshotTree, to: SnapshotTree, path: string): Promise<string> {
  const before = await sideOf(await from.entry(path));
  const after = await sideOf(await to.entry(path));
  if (before !== undefined && after !== undefined && (before.mode === '120000') !== (after.mode === '120000'))
    return fileDiff(path, before, undefined) + fileDiff(path, undefined, after);
  return fileDiff(path, before, after);
}

async function sideOf(entry: SnapshotEntry | undefined): Promise<Side | undefined> {
  if (entry === undefined || entry.kind === 'directory') return undefined;
  const bytes = await entry.bytes();
  const mode = entry.kind === 'symlink' ? '120000' : entry.executable ? '100755' : '100644';
  return { mode, bytes, oid: blobOid(bytes) };
}

/** One file's part of the patch; empty when nothing git records differs. */
function fileDiff(path: string, before: Side | undefined, after: Side | undefined): string {
  if (before?.oid === after?.oid && before?.mode === after?.mode) return '';
  const oldName = quoteName(`a/${path}`);
  const newName = quoteName(`b/${path}`);
  let out = `diff --git ${oldName} ${newName}\n`;
  if (before === undefined) out += `new file mode ${after?.mode}\n`;
  else if (after === undefined) out += `deleted file mode ${before.mode}\n`;
  else if (before.mode !== after.mode) out += `old mode ${before.mode}\nnew mode ${after.mode}\n`;
  const oldOid = before?.oid ?? NULL_OID;
  const newOid = after?.oid ?? NULL_OID;
  if (oldOid === newOid) return out;
  const sameMode = before !== undefined && after !== undefined && before.mode === after.mode;
  out += `index ${oldOid}..${newOid}${sameMode ? ` ${after.mode}` : ''}\n`;
  const oldBytes = before?.bytes ?? new Uint8Array();
  const newBytes = after?.bytes ?? new Uint8Array();
  // An empty file created or deleted: git prints no `---`/`+++` lines when there is no hunk.
  if (oldBytes.byteLength === 0 && newBytes.byteLength === 0) return out;
  if (!isText(oldBytes) || !isText(newBytes)) {
    return `${out}GIT binary patch\n${binaryLiteral(newBytes)}${binaryLiteral(oldBytes)}`;
  }
  // Git adds a tab after a name holding a space, so that the name's end is clear.
  const tab = (name: string): string => (name.includes(' ') ? '\t' : '');
  out += before === undefined ? '--- /dev/null\n' : `--- ${oldName}${tab(oldName)}\n`;
  out += after === undefined ? '+++ /dev/null\n' : `+++ ${newName}${tab(newName)}\n`;
  return out + textHunks(oldBytes, newBytes);
}
