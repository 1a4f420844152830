// Real servers for the remote-session tests and bench, started by them: a throwaway Postgres from the
// system binaries and s3rver in this process. One implementation, used by test/scale and bench/scale.mjs.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** The newest system Postgres's bin directory, or undefined. */
export function findPostgres() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => existsSync(join(base, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

/** Why Postgres cannot be started here, or undefined when it can. */
export function postgresUnavailable() {
  if (findPostgres() !== undefined) return undefined;
  return 'no Postgres server binaries under /usr/lib/postgresql/*/bin (install postgresql to run these)';
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const idOf = (flag, user) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());

/**
 * A throwaway Postgres: initdb in a temp dir, a loopback port, trust auth, run as `postgres` when we are
 * root (Postgres refuses root); pg_ctl logs to a file, never a pipe (a pipe would keep this process waiting
 * on the server's open descriptor).
 */
export async function startPostgres() {
  const bin = findPostgres();
  if (bin === undefined) throw new Error(postgresUnavailable());
  const dir = mkdtempSync(join(tmpdir(), 'sessionfs-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    chmodSync(dir, 0o755);
    chownSync(dir, idOf('-u', 'postgres'), idOf('-g', 'postgres'));
  }
  const run = (tool, args) => {
    const command = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    const result = spawnSync(command, argv, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr}`);
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', options, 'start']);
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** Restarts the server as an administrator would (`pg_ctl restart -m fast`): every connection is terminated. */
    restart() {
      run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-m', 'fast', '-w', 'restart']);
    },
    /** Stops the server, keeping its data, until `up()`. */
    down() {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    up() {
      run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', options, 'start']);
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** s3rver in this process on a loopback port, with a fresh bucket. */
export async function startS3(bucket = 'sessionfs') {
  const directory = mkdtempSync(join(tmpdir(), 'sessionfs-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = () =>
    new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  await client().send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    client,
    endpoint,
    directory,
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
