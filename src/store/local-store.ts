import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { ConflictError, CorruptDataError, InvalidArgumentError } from '../workspace/errors.js';
import { directoryLock } from './file-lock.js';
import { localBlobStore, type LocalBlobStore } from './local-blob-store.js';
import { prepareStoreDir, storeWriteError } from './local-format.js';
import { leaseOwnerIsGone } from './lease-owner.js';
import { markHistoryReachable } from './history-blobs.js';
import { markReachable } from './reachable.js';
import { checkSessionId, sessionFileName } from './session-names.js';
import type { PublishRequest, SessionHead, SessionInfo, SessionStore } from './session-store.js';

export interface LocalSessionStoreOptions {
  /** The store directory: created when absent; an existing one must be a store of this version. */
  dir: string;
  /** Published roots kept per session besides the head (restorable, kept by gc). Default 5. */
  keepVersions?: number;
  /**
   * Sync blobs and heads to disk before a head moves, so a power loss (not only a killed process) leaves
   * the old head or the new. Default true; `false` keeps kill -9 safety (every file is renamed into place
   * whole) and skips the syncs.
   */
  fsync?: boolean;
}

/**
 * A session's head file: the head, its lease and the retained roots. Times are milliseconds since the
 * epoch (this machine's clock: every process of a local store shares it). `base`, `createdAt`,
 * `updatedAt` and a retained root's `at` are absent from heads written before they existed.
 */
interface HeadRecord {
  sessionId: string;
  parentId: string | null;
  root: string | null;
  version: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  retained: { version: number; root: string; at?: number }[];
  /** The root the session began from (null: the empty tree). */
  base?: string | null;
  createdAt?: number;
  updatedAt?: number;
  /** The history index published with the head (see `writeHistory`); absent: none. */
  history?: string | null;
}

const OPTIONS = new Set(['dir', 'keepVersions', 'fsync']);

/**
 * An embedded session store in a local directory, with the interface of `postgresSessionStore`:
 * content-addressed blobs shared by every session (`blobs/ab/<sha256>`, checked on read), one head file per
 * session (`sessions/*.json`) holding its root, version, lease and retained roots, and collection state.
 *
 * Crash-safe: every file is written to a temp file and renamed into place (`write-file-atomic`), blobs
 * before the head that names them, so a process killed at any point leaves the old head or the new. Heads
 * move, leases change and gc runs under one lock between processes (`proper-lockfile`, broken after 5 s
 * when its holder was killed); a publish uploads outside it and re-checks its fencing version inside.
 */
export function localSessionStore(options: LocalSessionStoreOptions): SessionStore {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('localSessionStore needs { dir }');
  for (const key of Object.keys(options))
    if (!OPTIONS.has(key)) throw new InvalidArgumentError(`localSessionStore does not take the option '${key}'`);
  if (typeof options.dir !== 'string' || options.dir === '') throw new InvalidArgumentError('localSessionStore needs a dir');
  const keep = options.keepVersions ?? 5;
  if (!Number.isInteger(keep) || keep < 0) throw new InvalidArgumentError('keepVersions must be a non-negative integer');
  if (options.fsync !== undefined && typeof options.fsync !== 'boolean') throw new InvalidArgumentError('fsync must be a boolean');
  const fsync = options.fsync ?? true;
  const dir = resolve(options.dir);
  prepareStoreDir(dir);

  const blobs = localBlobStore({ dir: `${dir}/blobs`, quarantine: `${dir}/corrupt`, fsync });
  const sessionsDir = `${dir}/sessions`;
  const exclusive = directoryLock(dir, 'store.lock');
  const headPath = (sessionId: string): string => `${sessionsDir}/${sessionFileName(sessionId)}`;

  const readRecord = async (sessionId: string): Promise<HeadRecord | undefined> => {
    let text: string;
    try {
      text = await readFile(headPath(sessionId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw storeWriteError(error, `read the head of session '${sessionId}'`);
    }
    return parseRecord(text, sessionId);
  };
  const writeRecord = async (record: HeadRecord): Promise<void> => {
    try {
      await writeFileAtomic(headPath(record.sessionId), `${JSON.stringify(record)}\n`, { fsync, mode: 0o644 });
    } catch (error) {
      throw storeWriteError(error, `write the head of session '${record.sessionId}'`);
    }
  };
  const fenced = (record: HeadRecord | undefined, request: PublishRequest): HeadRecord => {
    if (record === undefined) throw new ConflictError(`session '${request.sessionId}' no longer exists`);
    if (record.leaseOwner !== request.owner || record.version !== request.expectedVersion)
      throw new ConflictError(
        `session '${request.sessionId}' moved on: another owner took it over (head version ${record.version}, this owner last saw ${request.expectedVersion}); nothing was published`,
      );
    return record;
  };

  return {
    blobs,

    async head(sessionId) {
      const record = await readRecord(checkSessionId(sessionId));
      return record === undefined ? undefined : toHead(record);
    },

    acquire: async (sessionId, owner, leaseMs, from) => {
      checkSessionId(sessionId);
      checkOwner(owner, leaseMs);
      if (from !== undefined) checkSessionId(from, 'from');
      return exclusive(async () => {
        let record = await readRecord(sessionId);
        if (record === undefined) {
          let root: string | null = null;
          if (from !== undefined) {
            const parent = await readRecord(from);
            if (parent === undefined) throw new InvalidArgumentError(`cannot fork session '${from}': it does not exist`);
            root = parent.root;
          }
          const now = Date.now();
          record = {
            sessionId,
            parentId: from ?? null,
            root,
            version: 0,
            leaseOwner: null,
            leaseUntil: null,
            retained: [],
            base: root,
            createdAt: now,
            updatedAt: now,
          };
        }
        const now = Date.now();
        if (leaseHeld(record, now) && record.leaseOwner !== owner)
          throw new ConflictError(
            `session '${sessionId}' is open elsewhere: its lease is held until ${new Date(record.leaseUntil ?? 0).toISOString()}`,
          );
        const head = toHead(record);
        await writeRecord({ ...record, leaseOwner: owner, leaseUntil: now + leaseMs });
        return head;
      });
    },

    renew: async (sessionId, owner, leaseMs) => {
      checkSessionId(sessionId);
      checkOwner(owner, leaseMs);
      return exclusive(async () => {
        const record = await readRecord(sessionId);
        if (record === undefined || record.leaseOwner !== owner) return false;
        await writeRecord({ ...record, leaseUntil: Date.now() + leaseMs });
        return true;
      });
    },

    release: async (sessionId, owner) => {
      checkSessionId(sessionId);
      return exclusive(async () => {
        const record = await readRecord(sessionId);
        if (record === undefined || record.leaseOwner !== owner) return;
        await writeRecord({ ...record, leaseOwner: null, leaseUntil: null });
      });
    },

    async publish(request) {
      checkSessionId(request.sessionId);
      checkOwner(request.owner, request.leaseMs);
      fenced(await readRecord(request.sessionId), request); // refuse a fenced-off owner before it uploads
      const upload = await request.upload();
      return exclusive(async () => {
        const record = fenced(await readRecord(request.sessionId), request);
        // A blob found stored during the upload may have been collected since, while nothing reached it:
        // put it back before the head can name it. gc holds the same lock, so none goes missing after this.
        for (const [hash, bytes] of upload.blobs) if (!(await blobs.has(hash))) await blobs.put(hash, bytes);
        if (!(await blobs.has(upload.root)))
          throw new InvalidArgumentError(`publish names a root manifest ${upload.root} that is not stored; nothing was published`);
        if (upload.history !== undefined && !(await blobs.has(upload.history)))
          throw new InvalidArgumentError(`publish names a history ${upload.history} that is not stored; nothing was published`);
        await blobs.flush(); // every blob on disk before the head that names it
        const version = record.version + 1;
        const now = Date.now();
        const retained = [...record.retained, { version, root: upload.root, at: now }].filter((entry) => entry.version > version - keep);
        await writeRecord({
          ...record,
          root: upload.root,
          version,
          leaseUntil: now + request.leaseMs,
          retained,
          updatedAt: now,
          // A history belongs to the head it was published with: a publish without one leaves none.
          history: upload.history ?? null,
          ...(request.base === true ? { base: upload.root } : {}),
        });
        return version;
      });
    },

    deleteSession: async (sessionId) => {
      checkSessionId(sessionId);
      return exclusive(async () => {
        await unlink(headPath(sessionId)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw storeWriteError(error, `delete session '${sessionId}'`);
        });
      });
    },

    async describeSession(sessionId) {
      const record = await readRecord(checkSessionId(sessionId));
      return record === undefined ? undefined : toInfo(record);
    },

    async listSessions() {
      const records = await allRecords(sessionsDir);
      return records.map(toHead).sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
    },

    gc: async ({ graceMs = 3_600_000 } = {}) => {
      if (!Number.isFinite(graceMs) || graceMs < 0) throw new InvalidArgumentError('graceMs must be a non-negative number');
      return exclusive(() => collect(dir, blobs, sessionsDir, graceMs, fsync));
    },
  };
}

function checkOwner(owner: unknown, leaseMs: unknown): void {
  if (typeof owner !== 'string' || owner === '' || owner.length > 200) throw new InvalidArgumentError('owner must be a non-empty string');
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 1)
    throw new InvalidArgumentError('leaseMs must be a positive integer');
}

function parseRecord(text: string, sessionId: string | undefined): HeadRecord {
  let record: HeadRecord;
  try {
    record = JSON.parse(text) as HeadRecord;
  } catch {
    throw new CorruptDataError(`the head of session '${sessionId ?? '?'}' does not parse`);
  }
  if (typeof record?.sessionId !== 'string' || !Number.isInteger(record.version) || !Array.isArray(record.retained))
    throw new CorruptDataError(`the head of session '${sessionId ?? '?'}' is not a head record`);
  // Two ids that share a hashed file name would be a sha256 collision; an id mismatch is corruption.
  if (sessionId !== undefined && record.sessionId !== sessionId)
    throw new CorruptDataError(`the head file of session '${sessionId}' holds session '${record.sessionId.slice(0, 80)}'`);
  return record;
}

async function allRecords(sessionsDir: string): Promise<HeadRecord[]> {
  const names = await readdir(sessionsDir).catch(() => [] as string[]);
  const records: HeadRecord[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue; // a killed writer's temp file
    const text = await readFile(`${sessionsDir}/${name}`, 'utf8').catch(() => undefined);
    if (text !== undefined) records.push(parseRecord(text, undefined));
  }
  return records;
}

function toHead(record: HeadRecord): SessionHead {
  return {
    sessionId: record.sessionId,
    parentId: record.parentId ?? undefined,
    root: record.root ?? undefined,
    version: record.version,
    ...(typeof record.history === 'string' ? { history: record.history } : {}),
  };
}

/** An unexpired lease whose owner may still be alive. */
function leaseHeld(record: HeadRecord, now: number): boolean {
  return record.leaseOwner !== null && (record.leaseUntil ?? 0) > now && !leaseOwnerIsGone(record.leaseOwner);
}

/** The root a session began from: a head written before `base` existed began where its parent was, unknown here, so empty. */
function baseOf(record: HeadRecord): string | null {
  return record.base ?? null;
}

function toInfo(record: HeadRecord): SessionInfo {
  const updatedAt = record.updatedAt ?? record.retained.at(-1)?.at ?? record.createdAt ?? 0;
  return {
    ...toHead(record),
    base: baseOf(record) ?? undefined,
    createdAt: new Date(record.createdAt ?? updatedAt),
    updatedAt: new Date(updatedAt),
    leaseUntil: leaseHeld(record, Date.now()) ? new Date(record.leaseUntil ?? 0) : undefined,
    retained: record.retained
      .map((entry) => ({ version: entry.version, root: entry.root, publishedAt: new Date(entry.at ?? updatedAt) }))
      .sort((a, b) => b.version - a.version),
  };
}

/**
 * Marks every blob reachable from a head, base or retained root or a head's history, then deletes those unreachable on every
 * collection for longer than `graceMs` (first seen unreachable is remembered in `gc.json`). A manifest that
 * cannot be read aborts the collection before anything is deleted. Temp files a killed writer left are
 * swept once older than the grace period.
 */
async function collect(
  dir: string,
  blobs: LocalBlobStore,
  sessionsDir: string,
  graceMs: number,
  fsync: boolean,
): Promise<{ reachable: number; deleted: number; pending: number }> {
  const reachable = new Set<string>();
  for (const record of await allRecords(sessionsDir)) {
    if (record.root !== null) await markReachable(blobs, record.root, reachable);
    const base = baseOf(record);
    if (base !== null) await markReachable(blobs, base, reachable);
    for (const { root } of record.retained) await markReachable(blobs, root, reachable);
    if (typeof record.history === 'string') await markHistoryReachable(blobs, record.history, reachable);
  }
  const statePath = `${dir}/gc.json`;
  const previous = parseCandidates(await readFile(statePath, 'utf8').catch(() => '{}'));
  const now = Date.now();
  const candidates: Record<string, number> = {};
  let deleted = 0;
  for await (const hash of blobs.list()) {
    if (reachable.has(hash)) continue;
    const firstSeen = previous[hash] ?? now;
    if (now - firstSeen >= graceMs) {
      await blobs.delete(hash);
      deleted += 1;
    } else candidates[hash] = firstSeen;
  }
  await writeFileAtomic(statePath, JSON.stringify(candidates), { fsync }).catch((error: unknown) => {
    throw storeWriteError(error, 'write the collection state');
  });
  await sweepTempFiles([`${dir}/blobs`, sessionsDir], now - graceMs);
  return { reachable: reachable.size, deleted, pending: Object.keys(candidates).length };
}

/** The collection state; one that does not parse only delays deletions (every candidate starts anew). */
function parseCandidates(text: string): Record<string, number> {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

async function sweepTempFiles(dirs: string[], before: number): Promise<void> {
  const isTemp = (name: string): boolean => /\.\d+$/.test(name);
  for (const top of dirs) {
    const folders = [
      top,
      ...(await readdir(top).catch(() => [] as string[])).filter((name) => /^[0-9a-f]{2}$/.test(name)).map((name) => `${top}/${name}`),
    ];
    for (const folder of folders)
      for (const name of await readdir(folder).catch(() => [] as string[])) {
        if (!isTemp(name)) continue;
        const path = `${folder}/${name}`;
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && info.mtimeMs < before) await unlink(path).catch(() => undefined);
      }
  }
}
