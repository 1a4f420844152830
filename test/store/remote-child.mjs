// A second machine for the remote-session tests: its own process, pool and blob cache. Commands by argv:
//   digest                 print a digest of every file in the session's head
//   write-and-pause N      open, write N files, print "ready", wait for SIGCONT-resumed stdin line, publish
//   publish-big N          open, write N files of 4 KiB, print "publishing", publish, print "done"
import pg from 'pg';
import { createSession } from '../../dist/src/index.js';
import { postgresSessionStore } from '../../dist/src/entries/store.js';
import { s3BlobStore } from '../../dist/src/store/s3.js';
import { S3Client } from '@aws-sdk/client-s3';
import { digestOf } from './digest.mjs';

const [connectionString, endpoint, bucket, schema, sessionId, command, arg] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString, max: 2 });
const client = new S3Client({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
});
const store = postgresSessionStore({ pool, blobs: s3BlobStore({ client, bucket }), schema });
const say = (line) => process.stdout.write(`${line}\n`);

try {
  if (command === 'digest') {
    const session = await createSession({ store, sessionId, readOnly: true });
    say(await digestOf(session.filesystem));
    await session.dispose();
  } else if (command === 'write-and-pause') {
    const session = await createSession({ store, sessionId, leaseMs: 1000 });
    for (let i = 0; i < Number(arg); i += 1) await session.filesystem.write(`/paused/${i}.txt`, `stale ${i}\n`);
    say('ready');
    await new Promise((resolve) => process.stdin.once('data', resolve));
    process.stdin.destroy(); // an open stdin would keep this process alive after its last line
    try {
      await session.publish();
      say('published');
    } catch (error) {
      say(`refused ${error.code}`);
    }
    await session.filesystem.dispose();
  } else if (command === 'publish-big') {
    const session = await createSession({ store, sessionId, leaseMs: 60_000 });
    for (let i = 0; i < Number(arg); i += 1) await session.filesystem.write(`/big/${i}.txt`, `${i}`.padEnd(4096, '.'));
    say('publishing');
    await session.publish();
    say('done');
  }
} finally {
  await pool.end();
}
