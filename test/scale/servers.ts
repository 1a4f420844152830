import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { S3Client, CreateBucketCommand } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** The newest system Postgres's bin directory, or undefined. */
export function findPostgres(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => existsSync(join(base, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

/** Why the Postgres tests cannot run here (printed by the skip), or undefined when they can. */
export function postgresUnavailable(): string | undefined {
  if (findPostgres() !== undefined) return undefined;
  return 'no Postgres server binaries under /usr/lib/postgresql/*/bin (install postgresql to run these tests)';
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RunningPostgres {
  connectionString: string;
  stop(): void;
}

/**
 * A throwaway Postgres: initdb in a temp dir, a loopback port, trust auth, run as `postgres` when we are
 * root (Postgres refuses to run as root); pg_ctl logs to a file, never a pipe (a pipe would keep a test
 * process waiting on the server's open descriptor).
 */
export async function startPostgres(): Promise<RunningPostgres> {
  const bin = findPostgres();
  if (bin === undefined) throw new Error(postgresUnavailable());
  const dir = mkdtempSync(join(tmpdir(), 'sessionfs-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    chmodSync(dir, 0o755);
    chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  }
  const run = (tool: string, args: string[]): void => {
    const command = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    const result = spawnSync(command, argv, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr}`);
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}
function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}

export interface RunningS3 {
  client(): S3Client;
  endpoint: string;
  stop(): Promise<void>;
}

/** s3rver in this process on a loopback port, with a fresh bucket `bucket`. */
export async function startS3(bucket = 'sessionfs'): Promise<RunningS3> {
  const directory = mkdtempSync(join(tmpdir(), 'sessionfs-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = (): S3Client =>
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
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
