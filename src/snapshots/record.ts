import { z } from 'zod';
import { SnapshotRestoreError } from '../workspace/errors.js';
import type { DiffEntry, WorkspaceSnapshot } from '../workspace/types.js';

/**
 * A snapshot record as it travels through JSON: what `snapshot()` returns and `restore()` accepts. Open to
 * any backend: `backend` is the driver's name and `meta` holds a third-party backend's own fields (JSON
 * values); the host keeps its `gitDir` at the top level, so records written before the API opened still parse.
 */
export const WorkspaceSnapshotSchema = z.object({
  id: z.string().min(1),
  backend: z.string().min(1),
  ref: z.string().min(1),
  createdAt: z.iso.datetime({ offset: true }),
  root: z.string().min(1),
  gitDir: z.string().min(1).optional(),
  tag: z.string().optional(),
  meta: z.record(z.string(), z.json()).optional(),
});

/** Validates a record handed to `restore`/`diff`; anything malformed is a `SnapshotRestoreError`. */
export function parseSnapshotRecord(value: unknown): WorkspaceSnapshot {
  const parsed = WorkspaceSnapshotSchema.safeParse(value);
  if (!parsed.success) {
    throw new SnapshotRestoreError(
      `not a snapshot record: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'record'}: ${i.message}`).join('; ')}`,
    );
  }
  const record: WorkspaceSnapshot = {
    id: parsed.data.id,
    backend: parsed.data.backend,
    ref: parsed.data.ref,
    createdAt: parsed.data.createdAt,
    root: parsed.data.root,
  };
  if (parsed.data.gitDir !== undefined) record.gitDir = parsed.data.gitDir;
  if (parsed.data.tag !== undefined) record.tag = parsed.data.tag;
  if (parsed.data.meta !== undefined) record.meta = parsed.data.meta;
  return record;
}

/** Diff entries in the promised order (by path, code-unit order). */
export function sortDiff(entries: DiffEntry[]): DiffEntry[] {
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
