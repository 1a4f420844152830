import type { BlobStore } from '../workspace/driver.js';
import { ConflictError, InvalidArgumentError } from '../workspace/errors.js';
import { leaseOwnerIsGone } from './lease-owner.js';
import { markHistoryReachable } from './history-blobs.js';
import { markReachable } from './reachable.js';
import { resolveRetry, withRetry, type RetryOptions } from './retry.js';
import type { PublishRequest, SessionHead, SessionInfo, SessionStore } from './session-store.js';

/** The part of `pg`'s `Pool` this store uses (so `pg` is the user's dependency, not ours). */
export interface PgPool {
  connect(): Promise<PgClient>;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}
export interface PgClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  release(error?: Error | boolean): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

export interface PostgresSessionStoreOptions {
  pool: PgPool;
  blobs: BlobStore;
  /** Postgres schema for the tables (created on first use). Default `sessionfs`. */
  schema?: string;
  /** Published roots kept per session besides the head (restorable, kept by gc). Default 5. */
  keepVersions?: number;
  /**
   * Retries of a transaction that lost its connection (a restart, a refused connection): on a new connection,
   * with backoff until the deadline, then `StoreUnavailableError` (`EUNAVAILABLE`). Default 30 s.
   */
  retry?: RetryOptions;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Clients given an error listener: a connection the server drops must not crash the process. */
const guarded = new WeakSet<object>();

/**
 * Heads, leases, retained snapshots and collection state in Postgres; contents in `blobs`. Times are the
 * database's (`now()`), so machines with skewed clocks agree on lease expiry. A connection is held only for
 * a short transaction, never across an upload. A publish uploads first, then moves the head in a
 * transaction holding a shared advisory lock (`gc` holds the exclusive one) that first puts back any blob a
 * collection deleted meanwhile: a head never points at a deleted object. A transaction that loses its
 * connection (Postgres restarted, unreachable) is retried on a new one until the retry deadline.
 */
export function postgresSessionStore(options: PostgresSessionStoreOptions): SessionStore {
  const schema = options.schema ?? 'sessionfs';
  if (!IDENTIFIER.test(schema)) throw new InvalidArgumentError(`schema must be a lowercase SQL identifier, got '${schema.slice(0, 80)}'`);
  const keep = options.keepVersions ?? 5;
  const { pool, blobs } = options;
  const retry = resolveRetry(options.retry);
  const t = (table: string): string => `"${schema}"."${table}"`;
  let ready: Promise<void> | undefined;
  // An idle pooled connection the server drops emits 'error' on the pool: without a listener, that kills the process.
  if (typeof pool.on === 'function' && !guarded.has(pool)) {
    pool.on('error', () => undefined);
    guarded.add(pool);
  }

  const once = async <T>(work: (client: PgClient) => Promise<T>): Promise<T> => {
    ready ??= createTables(pool, schema, t).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    await ready;
    const client = await pool.connect();
    if (typeof client.on === 'function' && !guarded.has(client)) {
      client.on('error', () => undefined); // the query in flight fails instead, and is retried
      guarded.add(client);
    }
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      const broken = isConnectionError(error);
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      // A broken connection is destroyed, not returned to the pool for the next caller to fail on.
      client.release(broken ? (error as Error) : undefined);
      throw error;
    }
  };
  const transaction = <T>(what: string, work: (client: PgClient) => Promise<T>): Promise<T> =>
    withRetry(what, () => once(work), isConnectionError, retry);
  const gcLock = `hashtext('sessionfs-gc:${schema}')`;

  return {
    blobs,

    head: (sessionId) =>
      transaction('reading a head', async (client) => {
        const { rows } = await client.query(
          `SELECT h.root, h.version, h.history, s.parent_id FROM ${t('heads')} h JOIN ${t('sessions')} s ON s.id = h.session_id WHERE h.session_id = $1`,
          [sessionId],
        );
        return rows[0] === undefined ? undefined : toHead(sessionId, rows[0]);
      }),

    acquire: (sessionId, owner, leaseMs, from) =>
      transaction('taking a lease', async (client) => {
        let root: string | null = null;
        if (from !== undefined) {
          const parent = await client.query(`SELECT root FROM ${t('heads')} WHERE session_id = $1`, [from]);
          if (parent.rows[0] === undefined) throw new InvalidArgumentError(`cannot fork session '${from}': it does not exist`);
          root = parent.rows[0].root as string | null;
        }
        await client.query(`INSERT INTO ${t('sessions')} (id, parent_id, base_root) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
          sessionId,
          from ?? null,
          root,
        ]);
        await client.query(`INSERT INTO ${t('heads')} (session_id, root) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [sessionId, root]);
        const { rows } = await client.query(
          `SELECT h.root, h.version, h.history, h.lease_owner, h.lease_until, h.lease_until > now() AS held, s.parent_id
             FROM ${t('heads')} h JOIN ${t('sessions')} s ON s.id = h.session_id WHERE h.session_id = $1 FOR UPDATE OF h`,
          [sessionId],
        );
        const row = rows[0] as Record<string, unknown>;
        if (row.held === true && row.lease_owner !== owner && !leaseOwnerIsGone(String(row.lease_owner))) {
          const until = (row.lease_until as Date).toISOString();
          throw new ConflictError(`session '${sessionId}' is open elsewhere: its lease is held until ${until}`);
        }
        await client.query(
          `UPDATE ${t('heads')} SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond' WHERE session_id = $1`,
          [sessionId, owner, leaseMs],
        );
        return toHead(sessionId, row);
      }),

    renew: (sessionId, owner, leaseMs) =>
      transaction('renewing a lease', async (client) => {
        const { rowCount } = await client.query(
          `UPDATE ${t('heads')} SET lease_until = now() + $3 * interval '1 millisecond' WHERE session_id = $1 AND lease_owner = $2`,
          [sessionId, owner, leaseMs],
        );
        return rowCount === 1;
      }),

    release: async (sessionId, owner) => {
      await transaction('releasing a lease', (client) =>
        client.query(`UPDATE ${t('heads')} SET lease_owner = NULL, lease_until = NULL WHERE session_id = $1 AND lease_owner = $2`, [
          sessionId,
          owner,
        ]),
      );
    },

    publish: async (request: PublishRequest) => {
      const fenced = (row: Record<string, unknown> | undefined): void => {
        if (row === undefined) throw new ConflictError(`session '${request.sessionId}' no longer exists`);
        if (row.lease_owner !== request.owner || Number(row.version) !== request.expectedVersion)
          throw new ConflictError(
            `session '${request.sessionId}' moved on: another owner took it over (head version ${Number(row.version)}, this owner last saw ${request.expectedVersion}); nothing was published`,
          );
      };
      const select = `SELECT version, lease_owner, root FROM ${t('heads')} WHERE session_id = $1`;
      // A fenced-off owner is refused before it uploads anything.
      await transaction('publishing', async (client) => fenced((await client.query(select, [request.sessionId])).rows[0]));
      const upload = await request.upload();
      const hashes = [...upload.blobs.keys()];
      return transaction('publishing', async (client) => {
        await client.query(`SELECT pg_advisory_xact_lock_shared(${gcLock})`);
        const row = (await client.query(`${select} FOR UPDATE`, [request.sessionId])).rows[0];
        // An attempt whose COMMIT landed but whose answer was lost (the connection dropped): it is done.
        if (row?.lease_owner === request.owner && Number(row.version) === request.expectedVersion + 1 && row.root === upload.root)
          return Number(row.version);
        fenced(row);
        // A blob stored (or found stored) during the upload may have been collected since, while nothing
        // reached it: put it back before the head can name it.
        const gone = await client.query(`SELECT hash FROM ${t('gc_candidates')} WHERE hash = ANY($1) AND deleted_at IS NOT NULL`, [hashes]);
        for (const { hash } of gone.rows) await blobs.put(hash as string, upload.blobs.get(hash as string) as Uint8Array);
        await client.query(`DELETE FROM ${t('gc_candidates')} WHERE hash = ANY($1)`, [hashes]);
        const moved = await client.query(
          `UPDATE ${t('heads')} SET root = $2, version = version + 1, updated_at = now(), lease_until = now() + $3 * interval '1 millisecond', history = $4
            WHERE session_id = $1 RETURNING version`,
          [request.sessionId, upload.root, request.leaseMs, upload.history ?? null],
        );
        const version = Number(moved.rows[0]?.version);
        await client.query(`INSERT INTO ${t('snapshots')} (session_id, version, root) VALUES ($1, $2, $3)`, [
          request.sessionId,
          version,
          upload.root,
        ]);
        await client.query(`DELETE FROM ${t('snapshots')} WHERE session_id = $1 AND version <= $2`, [request.sessionId, version - keep]);
        if (request.base === true)
          await client.query(`UPDATE ${t('sessions')} SET base_root = $2 WHERE id = $1`, [request.sessionId, upload.root]);
        return version;
      });
    },

    deleteSession: async (sessionId) => {
      await transaction('deleting a session', (client) => client.query(`DELETE FROM ${t('sessions')} WHERE id = $1`, [sessionId]));
    },

    listSessions: () =>
      transaction('listing sessions', async (client) => {
        const { rows } = await client.query(
          `SELECT h.session_id, h.root, h.version, h.history, s.parent_id FROM ${t('heads')} h JOIN ${t('sessions')} s ON s.id = h.session_id ORDER BY h.session_id`,
        );
        return rows.map((row) => toHead(row.session_id as string, row));
      }),

    describeSession: (sessionId) =>
      transaction('describing a session', async (client) => {
        const { rows } = await client.query(
          `SELECT h.root, h.version, h.history, h.lease_owner, h.lease_until, h.lease_until > now() AS held, h.updated_at, s.parent_id, s.base_root, s.created_at
             FROM ${t('heads')} h JOIN ${t('sessions')} s ON s.id = h.session_id WHERE h.session_id = $1`,
          [sessionId],
        );
        const row = rows[0];
        if (row === undefined) return undefined;
        const retained = await client.query(
          `SELECT version, root, created_at FROM ${t('snapshots')} WHERE session_id = $1 ORDER BY version DESC`,
          [sessionId],
        );
        const held = row.held === true && !leaseOwnerIsGone(String(row.lease_owner));
        const info: SessionInfo = {
          ...toHead(sessionId, row),
          base: (row.base_root as string | null) ?? undefined,
          createdAt: row.created_at as Date,
          updatedAt: row.updated_at as Date,
          leaseUntil: held ? (row.lease_until as Date) : undefined,
          retained: retained.rows.map((r) => ({ version: Number(r.version), root: r.root as string, publishedAt: r.created_at as Date })),
        };
        return info;
      }),

    gc: ({ graceMs = 3_600_000 } = {}) =>
      transaction('collecting', async (client) => {
        await client.query(`SELECT pg_advisory_xact_lock(${gcLock})`);
        const roots = await client.query(
          `SELECT root FROM ${t('heads')} WHERE root IS NOT NULL UNION SELECT root FROM ${t('snapshots')} UNION SELECT base_root FROM ${t('sessions')} WHERE base_root IS NOT NULL`,
        );
        const reachable = new Set<string>();
        for (const { root } of roots.rows) await markReachable(blobs, root as string, reachable);
        const histories = await client.query(`SELECT history FROM ${t('heads')} WHERE history IS NOT NULL`);
        for (const { history } of histories.rows) await markHistoryReachable(blobs, history as string, reachable);
        const unreachable: string[] = [];
        if (blobs.list === undefined) throw new InvalidArgumentError('gc needs a blob store that can list its blobs');
        for await (const hash of blobs.list()) if (!reachable.has(hash)) unreachable.push(hash);
        await client.query(`DELETE FROM ${t('gc_candidates')} WHERE deleted_at IS NULL AND NOT (hash = ANY($1))`, [unreachable]);
        await client.query(
          `INSERT INTO ${t('gc_candidates')} (hash) SELECT unnest($1::text[]) ON CONFLICT (hash) DO UPDATE SET deleted_at = NULL, first_seen = CASE WHEN ${t('gc_candidates')}.deleted_at IS NULL THEN ${t('gc_candidates')}.first_seen ELSE now() END`,
          [unreachable],
        );
        const due = await client.query(
          `SELECT hash FROM ${t('gc_candidates')} WHERE deleted_at IS NULL AND first_seen <= now() - $1 * interval '1 millisecond'`,
          [graceMs],
        );
        for (const { hash } of due.rows) {
          await blobs.delete?.(hash as string);
          await client.query(`UPDATE ${t('gc_candidates')} SET deleted_at = now() WHERE hash = $1`, [hash]);
        }
        return { reachable: reachable.size, deleted: due.rows.length, pending: unreachable.length - due.rows.length };
      }),
  };
}

async function createTables(pool: PgPool, schema: string, t: (table: string) => string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Two processes starting at once must not race on CREATE ... IF NOT EXISTS.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('sessionfs-schema:${schema}'))`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t('sessions')} (
      id text PRIMARY KEY, parent_id text, created_at timestamptz NOT NULL DEFAULT now())`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t('heads')} (
      session_id text PRIMARY KEY REFERENCES ${t('sessions')} (id) ON DELETE CASCADE,
      root text, version bigint NOT NULL DEFAULT 0, lease_owner text, lease_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t('snapshots')} (
      session_id text NOT NULL REFERENCES ${t('sessions')} (id) ON DELETE CASCADE, version bigint NOT NULL,
      root text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (session_id, version))`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t('gc_candidates')} (
      hash text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now(), deleted_at timestamptz)`);
    // The root a session began from (null: the empty tree); tables made before it existed gain it here.
    await client.query(`ALTER TABLE ${t('sessions')} ADD COLUMN IF NOT EXISTS base_root text`);
    // The history index published with the head (null: none).
    await client.query(`ALTER TABLE ${t('heads')} ADD COLUMN IF NOT EXISTS history text`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The connection failed (refused, reset, terminated by a restart): worth a new connection and another try. */
function isConnectionError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (/^(57P0[123]|08\w{3}|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/.test(code)) return true;
  }
  return (
    typeof message === 'string' &&
    /Connection terminated|connection error|timeout exceeded when trying to connect|not queryable/i.test(message)
  );
}

function toHead(sessionId: string, row: Record<string, unknown>): SessionHead {
  return {
    sessionId,
    parentId: (row.parent_id as string | null) ?? undefined,
    root: (row.root as string | null) ?? undefined,
    version: Number(row.version),
    ...(typeof row.history === 'string' ? { history: row.history } : {}),
  };
}
