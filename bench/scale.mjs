#!/usr/bin/env node
// Remote sessions on real servers (a throwaway Postgres + s3rver, started here), on a corpus of the first
// FILES files of this project's node_modules (default 10,000, files over 1 MiB left out). Measures:
//   - a second machine's first tool call after createSession({ store }) (lazy) vs downloading every blob first (eager);
//   - a publish after 10 changed files: S3 requests and Postgres statements counted, and timed;
//   - 10 sessions hydrated from the same corpus: bytes stored / corpus bytes (goal <= 1.1).
// Prints one JSON document. Usage: node bench/scale.mjs [files]   (after `npm run build`)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { workspaceTools, createSession } from '../dist/src/index.js';
import { postgresSessionStore } from '../dist/src/entries/store.js';
import { s3BlobStore } from '../dist/src/store/s3.js';
import { postgresUnavailable, startPostgres, startS3 } from './_servers.mjs';

// s3rver signs list continuation tokens with DES, a cipher OpenSSL 3 keeps in its legacy provider: listing
// more than 1,000 objects (the eager download, the stored-bytes count) needs it. Real S3 needs nothing.
if (!process.execArgv.includes('--openssl-legacy-provider')) {
  const rerun = spawnSync(process.execPath, ['--openssl-legacy-provider', ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
  });
  process.exit(rerun.status ?? 1);
}

const FILES = Number(process.argv[2] ?? 10_000);
const BUCKET = 'bench';
const repo = fileURLToPath(new URL('..', import.meta.url));
const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

if (postgresUnavailable() !== undefined) {
  console.log(JSON.stringify({ bench: 'scale', skipped: postgresUnavailable() }));
  process.exit(0);
}

/** The corpus: the first FILES regular files under node_modules in sorted order. */
function corpus() {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (files.length >= FILES) return;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size <= 1024 * 1024) files.push(path);
    }
  };
  walk(join(repo, 'node_modules'));
  return files.map((path) => ({ path: `/${relative(repo, path)}`, bytes: readFileSync(path) }));
}

/** A pool whose clients count the statements they run. */
function countingPool(connectionString) {
  const pool = new pg.Pool({ connectionString, max: 4 });
  const counter = { statements: 0 };
  return {
    counter,
    end: () => pool.end(),
    async connect() {
      const client = await pool.connect();
      return {
        query: (text, values) => ((counter.statements += 1), client.query(text, values)),
        release: (error) => client.release(error),
      };
    },
  };
}

const [postgres, s3] = await Promise.all([startPostgres(), startS3(BUCKET)]);
const machine = (cacheBytes) => {
  const pool = countingPool(postgres.connectionString);
  const blobs = s3BlobStore({ client: s3.client(), bucket: BUCKET, cacheBytes });
  return { pool, blobs, store: postgresSessionStore({ pool, blobs }) };
};
try {
  const files = corpus();
  const corpusBytes = files.reduce((sum, file) => sum + file.bytes.byteLength, 0);
  const target = files[Math.floor(files.length / 2)].path;
  const readFile = workspaceTools().find((tool) => tool.name === 'read_file');

  // Machine A publishes the corpus as session `corpus`.
  const a = machine();
  let start = performance.now();
  const seed = await createSession({ store: a.store, sessionId: 'corpus' });
  for (const file of files) await seed.filesystem.writeBytes(file.path, file.bytes);
  await seed.dispose();
  const seedMs = performance.now() - start;

  // Machine B, lazy: open, first tool call.
  const lazy = machine();
  start = performance.now();
  const opened = await createSession({ store: lazy.store, sessionId: 'corpus' });
  const first = await opened.runTool(readFile, { path: target });
  const lazyMs = performance.now() - start;
  if (!first.success) throw new Error(first.message);
  const lazyRequests = { ...lazy.blobs.requests };

  // Publish after 10 changed files, on the session B holds.
  const beforeS3 = { ...lazy.blobs.requests };
  const beforeSql = lazy.pool.counter.statements;
  for (let i = 0; i < 10; i += 1) await opened.filesystem.write(files[i * Math.floor(files.length / 10)].path, `changed ${i}\n`);
  start = performance.now();
  await opened.publish();
  const publishMs = performance.now() - start;
  const publishRequests = Object.fromEntries(Object.entries(lazy.blobs.requests).map(([kind, n]) => [kind, n - beforeS3[kind]]));
  const publishStatements = lazy.pool.counter.statements - beforeSql;
  await opened.dispose();

  // Machine C, eager: download every blob first, then open and make the same call.
  const eager = machine(4 * corpusBytes);
  start = performance.now();
  for await (const hash of eager.blobs.list()) await eager.blobs.get(hash);
  const eagerSession = await createSession({ store: eager.store, sessionId: 'corpus', readOnly: true });
  await eagerSession.runTool(readFile, { path: target });
  const eagerMs = performance.now() - start;
  await eagerSession.dispose();

  // Ten sessions hydrated from the same corpus, on one machine: stored bytes vs the corpus.
  const many = machine();
  for (let n = 0; n < 10; n += 1) {
    const session = await createSession({ store: many.store, sessionId: `user-${n}` });
    for (const file of files) await session.filesystem.writeBytes(file.path, file.bytes);
    await session.dispose();
  }
  let storedBytes = 0;
  let objects = 0;
  let token;
  do {
    const page = await s3.client().send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      storedBytes += object.Size ?? 0;
      objects += 1;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);

  console.log(
    JSON.stringify(
      {
        bench: 'scale',
        corpus: { files: files.length, megabytes: round(corpusBytes / 1024 / 1024) },
        seedPublishMs: round(seedMs),
        firstToolCall: {
          lazyMs: round(lazyMs),
          lazyRequests,
          eagerDownloadAllMs: round(eagerMs),
          speedup: round(eagerMs / lazyMs),
          goal: '>= 20x sooner',
        },
        publishAfter10ChangedFiles: { ms: round(publishMs), s3Requests: publishRequests, postgresStatements: publishStatements },
        tenSessionsSameCorpus: {
          sessions: 11,
          storedMegabytes: round(storedBytes / 1024 / 1024),
          objects,
          ratioToCorpus: round(storedBytes / corpusBytes, 3),
          goal: '<= 1.1',
        },
      },
      null,
      2,
    ),
  );
  await Promise.all([a.pool.end(), lazy.pool.end(), eager.pool.end(), many.pool.end()]);
} finally {
  postgres.stop();
  await s3.stop();
}
