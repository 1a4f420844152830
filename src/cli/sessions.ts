import { dirname, resolve } from 'node:path';
import { exportTo } from '../export/export.js';
import { ExportConflictError, type ExportResult } from '../export/export-plan.js';
import { blobTreeSnapshot } from '../store/blob-tree-snapshotter.js';
import { storeDriver } from '../store/store-driver.js';
import type { SessionInfo, SessionStore } from '../store/session-store.js';
import { treeSize, type TreeSize } from '../store/tree-size.js';
import { createWorkspace } from '../workspace/create-workspace.js';
import { writeAtomically } from './exit-work.js';
import { openStore, storeLabel } from './open-store.js';
import type { SessionsCommand } from './sessions-args.js';
import { checkPatchOut } from './start-checks.js';
import { statText, StoredChange } from './stored-change.js';
import { SessionInUseError } from './usage-error.js';
import { formatBytes } from '../text/format-bytes.js';

type Out = Pick<NodeJS.WritableStream, 'write'>;

/** Something the command could not do (no such session, a conflict): said on stderr, exit status 1. */
export class SessionsCommandError extends Error {
  override name = 'SessionsCommandError';
}

/**
 * `sessionfs sessions <action>`: resolves to the exit status. Usage errors (`UsageError`) and a session in
 * use (`SessionInUseError`) are thrown for `main` to report; what failed is a `SessionsCommandError`.
 */
export async function runSessions(command: SessionsCommand, out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  const opened = await openStore(command.store, { create: false });
  try {
    const store = opened?.store;
    const info = async (name: string): Promise<SessionInfo> => {
      const found = await store?.describeSession(name);
      if (found === undefined) throw new SessionsCommandError(`no session named ${JSON.stringify(name)} in ${storeLabel(command.store)}`);
      return found;
    };
    switch (command.action) {
      case 'list':
        return await list(store, command.json, out);
      case 'show':
        return await show(store as SessionStore, await info(command.name), command.json, out);
      case 'diff': {
        const change = new StoredChange((store as SessionStore).blobs, await info(command.name));
        if (command.json) out.write(`${JSON.stringify(await change.stat(), null, 2)}\n`);
        else out.write(command.stat ? statText(await change.stat()) : await change.patch());
        return 0;
      }
      case 'export': {
        await checkPatchOut(command.patchOut);
        const patch = await new StoredChange((store as SessionStore).blobs, await info(command.name)).patch();
        await writeAtomically(resolve(command.patchOut), patch);
        const files = patch.match(/^diff --git /gm)?.length ?? 0;
        err.write(
          `sessionfs: wrote the patch of session ${JSON.stringify(command.name)} (${count(files, 'file')} changed) to ${command.patchOut}\n`,
        );
        return 0;
      }
      case 'write-back':
        return await writeBack(store as SessionStore, await info(command.name), command, out);
      case 'rm': {
        const found = await info(command.name);
        if (found.leaseUntil !== undefined && !command.force)
          throw new SessionInUseError(
            `session ${JSON.stringify(command.name)} is open in another process (its lease is held until ${found.leaseUntil.toISOString()}): stop that server first, or give --force`,
          );
        await (store as SessionStore).deleteSession(command.name);
        err.write(`sessionfs: removed session ${JSON.stringify(command.name)}; \`sessionfs sessions gc\` frees what only it used\n`);
        return 0;
      }
      case 'gc': {
        if (store === undefined) {
          out.write(
            command.json ? `${JSON.stringify({ reachable: 0, deleted: 0, pending: 0 })}\n` : 'the store is empty: nothing to collect\n',
          );
          return 0;
        }
        const result = await store.gc({ graceMs: command.graceMs });
        if (command.json) out.write(`${JSON.stringify(result)}\n`);
        else
          out.write(
            `deleted ${count(result.deleted, 'blob')} no session reaches; ${count(result.pending, 'more')} unreachable for less than ${command.graceMs} ms (kept for now); ${count(result.reachable, 'blob')} in use\n`,
          );
        return 0;
      }
      default:
        throw new Error(`unknown sessions action ${JSON.stringify((command as { action: unknown }).action)}`);
    }
  } finally {
    await opened?.close();
  }
}

async function list(store: SessionStore | undefined, json: boolean, out: Out): Promise<number> {
  const rows: { info: SessionInfo; size: TreeSize }[] = [];
  const seen = new Map<string, TreeSize>();
  for (const head of (await store?.listSessions()) ?? []) {
    const info = await store?.describeSession(head.sessionId);
    if (info !== undefined) rows.push({ info, size: await treeSize((store as SessionStore).blobs, info.root, seen) });
  }
  if (json) {
    out.write(
      `${JSON.stringify(
        rows.map(({ info, size }) => ({ ...summary(info), ...size })),
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  if (rows.length === 0) {
    out.write('no sessions\n');
    return 0;
  }
  const table = [
    ['NAME', 'VERSION', 'UPDATED', 'FILES', 'SIZE', 'OPEN'],
    ...rows.map(({ info, size }) => [
      info.sessionId,
      String(info.version),
      info.updatedAt.toISOString(),
      String(size.files),
      formatBytes(size.bytes),
      info.leaseUntil === undefined ? 'no' : 'yes',
    ]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  for (const row of table)
    out.write(
      `${row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()}\n`,
    );
  return 0;
}

async function show(store: SessionStore, info: SessionInfo, json: boolean, out: Out): Promise<number> {
  const size = await treeSize(store.blobs, info.root);
  const changes = await new StoredChange(store.blobs, info).changes();
  const changed = { added: 0, modified: 0, deleted: 0 };
  for (const change of changes) changed[change.status] += 1;
  if (json) {
    out.write(`${JSON.stringify({ ...summary(info), ...size, changed }, null, 2)}\n`);
    return 0;
  }
  const lines: [string, string][] = [
    ['version', String(info.version)],
    ['head', info.root ?? '(nothing published yet)'],
    ['began from', info.base ?? 'the empty tree'],
    ...(info.parentId === undefined ? [] : ([['forked from', info.parentId]] as [string, string][])),
    ['created', info.createdAt.toISOString()],
    ['updated', info.updatedAt.toISOString()],
    ['files', `${size.files} (${formatBytes(size.bytes)})`],
    [
      'changed',
      `${count(changes.length, 'file')} since it began (${changed.added} added, ${changed.modified} modified, ${changed.deleted} deleted)`,
    ],
    ['open', info.leaseUntil === undefined ? 'no' : `yes, by another process (lease held until ${info.leaseUntil.toISOString()})`],
  ];
  out.write(`session ${info.sessionId}\n`);
  for (const [label, value] of lines) out.write(`  ${label.padEnd(12)}${value}\n`);
  out.write(`published versions kept (newest first):\n`);
  if (info.retained.length === 0) out.write('  (none)\n');
  for (const entry of info.retained) out.write(`  v${entry.version}  ${entry.publishedAt.toISOString()}  ${entry.root}\n`);
  return 0;
}

/**
 * Applies the session's change (base → head) to the host directory: `exportTo` on a read-only workspace over
 * the head, from the base. A file of the directory that differs from the base is a conflict, handled by
 * `--on-conflict`; with `fail` (default) nothing is written and the conflicts are listed (exit 1).
 */
async function writeBack(
  store: SessionStore,
  info: SessionInfo,
  command: Extract<SessionsCommand, { action: 'write-back' }>,
  out: Out,
): Promise<number> {
  const to = resolve(command.to);
  let result: ExportResult;
  if (info.root === info.base) result = { written: [], deleted: [], conflicts: [], dryRun: command.dryRun };
  else {
    const workspace = createWorkspace(storeDriver({ blobs: store.blobs, ...(info.root === undefined ? {} : { root: info.root }) }), {
      readOnly: true,
    });
    try {
      result = await exportTo(workspace, to, {
        // The directory itself, or (when it is to be made) the one it is made in.
        allowedHostRoots: [dirname(to)],
        ...(info.base === undefined ? {} : { from: blobTreeSnapshot(info.base) }),
        dryRun: command.dryRun,
        onConflict: command.onConflict,
      });
    } catch (error) {
      if (!(error instanceof ExportConflictError)) throw error;
      if (command.json) out.write(`${JSON.stringify({ written: [], deleted: [], conflicts: error.conflicts, dryRun: false }, null, 2)}\n`);
      else for (const conflict of error.conflicts) out.write(`conflict      ${conflict.path} (${conflict.reason})\n`);
      throw new SessionsCommandError(
        `nothing was written: ${count(error.conflicts.length, 'file')} in the directory changed since the session began (--on-conflict skip or overwrite to go ahead)`,
      );
    } finally {
      await workspace.dispose();
    }
  }
  if (command.json) {
    out.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  const [write, remove] = result.dryRun ? ['would write', 'would delete'] : ['wrote', 'deleted'];
  for (const path of result.written) out.write(`${write.padEnd(14)}${path}\n`);
  for (const path of result.deleted) out.write(`${remove.padEnd(14)}${path}\n`);
  for (const conflict of result.conflicts)
    out.write(`${'conflict'.padEnd(14)}${conflict.path} (${conflict.reason}${command.onConflict === 'skip' ? ', left as it is' : ''})\n`);
  for (const skipped of result.skipped ?? []) out.write(`${'left out'.padEnd(14)}${skipped.path} (${skipped.reason})\n`);
  if (result.written.length + result.deleted.length + result.conflicts.length === 0) out.write('nothing to write\n');
  return 0;
}

function summary(info: SessionInfo) {
  return {
    name: info.sessionId,
    version: info.version,
    head: info.root ?? null,
    base: info.base ?? null,
    parent: info.parentId ?? null,
    createdAt: info.createdAt.toISOString(),
    updatedAt: info.updatedAt.toISOString(),
    open: info.leaseUntil !== undefined,
    leaseUntil: info.leaseUntil?.toISOString() ?? null,
    retained: info.retained.map((entry) => ({ version: entry.version, root: entry.root, publishedAt: entry.publishedAt.toISOString() })),
  };
}

function count(n: number, noun: string): string {
  return noun === 'more' ? `${n} more` : `${n} ${n === 1 ? noun : `${noun}s`}`;
}
