import * as fs from 'node:fs';
import { Readable } from 'node:stream';
import { NotSupportedError, ReadOnlyError } from '../workspace/errors.js';
import { releaseSnapshots } from '../workspace/snapshot-queue.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot, WriteFilesEntry } from '../workspace/types.js';
import type { StagedChange } from './capture.js';

/**
 * The file-kinds primitives (executable bits and links as protocol operations), feature-detected so this
 * works on workspaces with and without them: `setExecutable`, `symlink`, and `writeBytes`/`writeFiles`
 * taking `executable`.
 */
interface KindsWorkspace {
  setExecutable?(path: string, executable: boolean): Promise<void>;
  symlink?(target: string, path: string): Promise<void>;
}

/** Files up to this size are read whole and written in batches; larger ones are streamed (memory stays flat). */
const STREAM_FROM_BYTES = 1024 * 1024;
/** Most bytes of small files gathered into one `writeFiles` batch. */
const BATCH_BYTES = 16 * 1024 * 1024;

export interface ApplyOptions {
  /** The workspace object whose snapshots `releaseSnapshots` frees (the real one behind a session's view). */
  owner?: object;
  /** The snapshot to restore on a refusal, already being taken (released here); default one taken here. */
  before?: Promise<WorkspaceSnapshot>;
}

/**
 * Applies a program's changes to the workspace through the protocol, so policy, audit, quotas, watch
 * events, protected paths and read-only mounts all judge them as if a tool had made them. All or nothing:
 * a snapshot is taken first and restored when any change is refused, and the refusal is thrown.
 */
export async function applyChanges(
  workspace: SnapshotableWorkspace,
  changes: readonly StagedChange[],
  options: ApplyOptions = {},
): Promise<void> {
  if (changes.length === 0 || workspace.readOnly) {
    await options.before?.then((snapshot) => releaseSnapshots(options.owner ?? workspace, [snapshot])).catch(() => undefined);
    if (changes.length === 0) return;
    throw new ReadOnlyError(changes[0]?.path, 'the workspace is read-only: the program changed files');
  }
  const before = await (options.before ?? workspace.snapshot({ tag: 'before a program run' }));
  try {
    await applyInOrder(workspace, changes);
  } catch (error) {
    await workspace.restore(before);
    throw error;
  } finally {
    await releaseSnapshots(options.owner ?? workspace, [before]).catch(() => undefined);
  }
}

async function applyInOrder(workspace: SnapshotableWorkspace, changes: readonly StagedChange[]): Promise<void> {
  const kinds = workspace as SnapshotableWorkspace & KindsWorkspace;
  const hasKinds = typeof kinds.setExecutable === 'function';
  let batch: WriteFilesEntry[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const entries = batch;
    batch = [];
    batchBytes = 0;
    if (typeof workspace.writeFiles === 'function') await workspace.writeFiles(entries);
    else {
      for (const entry of entries) {
        if (entry.kind === 'directory') await workspace.mkdir(entry.path, { parents: true, existOk: true });
        else if (entry.kind === 'file') await workspace.writeBytes(entry.path, entry.content, { mode: 'overwrite', createParents: true });
      }
    }
  };
  const remove = async (path: string) => {
    await flush();
    if (await workspace.exists(path)) await workspace.delete(path, { recursive: true });
  };
  for (const change of changes) {
    if (change.kind === 'delete') {
      await flush();
      await workspace.delete(change.path, { recursive: true });
      continue;
    }
    // Before the file-kinds primitives, overwriting keeps a file's bits: one whose bit changes is made anew.
    const remake = !hasKinds && change.kind === 'file' && change.modeChanged;
    if (change.replace || remake) await remove(change.path);
    if (change.kind === 'directory') {
      batch.push({ kind: 'directory', path: change.path });
    } else if (change.kind === 'symlink') {
      await flush();
      if (typeof kinds.symlink !== 'function') {
        throw new NotSupportedError(`the program made a symlink (${change.path}), and this workspace cannot store symlinks`);
      }
      await kinds.symlink(change.target, change.path);
    } else if ((change.contentChanged || remake) && change.sizeBytes > STREAM_FROM_BYTES && (hasKinds || !change.executable)) {
      await flush();
      await streamFile(workspace, change.path, change.source, hasKinds ? { executable: change.executable } : {});
    } else if (change.contentChanged || remake) {
      const content = await readStaged(change.source);
      batch.push({ kind: 'file', path: change.path, content, executable: change.executable });
      batchBytes += content.length;
      if (batchBytes >= BATCH_BYTES) await flush();
    } else {
      // Only the executable bit changed.
      await flush();
      await kinds.setExecutable?.(change.path, change.executable);
    }
    if (change.kind === 'file' && hasKinds && change.modeChanged && !change.executable) {
      await flush();
      await kinds.setExecutable?.(change.path, false);
    }
  }
  await flush();
}

/** A staged file's bytes; the staging layer is ours and the program is gone, but a link is still never followed. */
async function readStaged(source: string): Promise<Uint8Array> {
  const handle = await fs.promises.open(source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    return new Uint8Array(await handle.readFile());
  } finally {
    await handle.close();
  }
}

async function streamFile(workspace: SnapshotableWorkspace, path: string, source: string, extra: { executable?: boolean }): Promise<void> {
  const handle = await fs.promises.open(source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  const input = Readable.toWeb(handle.createReadStream({ highWaterMark: 256 * 1024 })) as ReadableStream<Uint8Array>;
  const output = await workspace.createWriteStream(path, { mode: 'overwrite', createParents: true, ...extra });
  await input.pipeTo(output);
}
