import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, startS3, type RunningPostgres, type RunningS3 } from '../../bench/_servers.mjs';
import { postgresSkipReason } from '../support/postgres.js';
import { assertBuilt } from './support.js';
import { killAndResume, runCliWith, serveSession } from './stored-sessions-support.js';

const unavailable = postgresSkipReason('sessionfs mcp --store (Postgres + S3)');
const BUCKET = 'sessions';
/** s3rver's credentials (the region: any, with --s3-endpoint). */
const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

describe.skipIf(unavailable !== undefined)('sessionfs mcp --session --store postgres://… --s3 s3://… (real Postgres + s3rver)', () => {
  let postgres: RunningPostgres;
  let s3: RunningS3;
  beforeAll(async () => {
    assertBuilt();
    [postgres, s3] = await Promise.all([startPostgres(), startS3(BUCKET)]);
  }, 60_000);
  afterAll(async () => {
    postgres?.stop();
    await s3?.stop();
  });
  const storeFlags = () => ['--store', postgres.connectionString, '--s3', `s3://${BUCKET}/team-a`, '--s3-endpoint', s3.endpoint];

  it('keeps the work through a SIGKILL of the server: a new server resumes it from Postgres and S3; a second one exits 3', async () => {
    await killAndResume(['--session', 'remote-demo', ...storeFlags()], S3_ENV);
  });

  it('sessions list, show, diff and rm work on the remote store; gc frees what only a removed session used', async () => {
    const served = await serveSession(['--session', 'remote-review', ...storeFlags()], S3_ENV);
    await served.call('write_file', { path: 'review/a.txt', content: 'remote\n' });
    await served.client.close();
    await served.exited;
    const listed = JSON.parse((await runCliWith(['sessions', 'list', '--json', ...storeFlags()], S3_ENV)).stdout) as { name: string }[];
    expect(listed.map((session) => session.name)).toContain('remote-review');
    const show = await runCliWith(['sessions', 'show', 'remote-review', ...storeFlags()], S3_ENV);
    expect(show.stdout).toContain('changed     1 file since it began (1 added, 0 modified, 0 deleted)');
    expect((await runCliWith(['sessions', 'diff', 'remote-review', ...storeFlags()], S3_ENV)).stdout).toContain(
      '+++ b/review/a.txt\n@@ -0,0 +1 @@\n+remote\n',
    );
    expect(await runCliWith(['sessions', 'rm', 'remote-review', ...storeFlags()], S3_ENV)).toMatchObject({ code: 0 });
    await runCliWith(['sessions', 'gc', ...storeFlags()], S3_ENV); // first seen unreachable
    const freed = JSON.parse((await runCliWith(['sessions', 'gc', '--grace-ms', '0', '--json', ...storeFlags()], S3_ENV)).stdout);
    expect(freed.deleted).toBeGreaterThan(0);
    // The password of a connection URL never shows in a message.
    const wrong = await runCliWith(['sessions', 'list', '--store', 'postgres://u:hunter2@127.0.0.1:1/x', '--s3', 's3://bucket'], S3_ENV);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).not.toContain('hunter2');
  });
});
