import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { postgresUnavailable, startPostgres, type RunningPostgres } from '../../bench/_servers.mjs';

/**
 * Why the Postgres tests of `what` cannot run here (undefined when they can). Outside CI that skip is
 * printed; with CI set a missing Postgres fails the run instead of passing silently.
 */
export function postgresSkipReason(what: string): string | undefined {
  const unavailable = postgresUnavailable();
  if (unavailable === undefined) return undefined;
  if (process.env.CI) throw new Error(`CI is set and ${unavailable}`);
  console.log(`skipping the ${what} tests: ${unavailable}`);
  return unavailable;
}

/** Starts a real Postgres for the enclosing describe block; the returned function gives its pool. */
export function usePostgresPool(max = 8): () => pg.Pool {
  let server: RunningPostgres | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.connectionString, max });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    server?.stop();
  });
  return () => {
    if (pool === undefined) throw new Error('the Postgres pool is used before beforeAll started it');
    return pool;
  };
}
