// Another process on the same local store, for the local-store tests. Commands by argv:
//   write N                 open, write N files (content from the seed), publish, print the digest, dispose
//   publish-kill SEED N K   open, write N files, then SIGKILL itself at the K-th file-system write of the
//                           publish (K = -1: never; print the number of writes the publish made instead)
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { createSession } from '../../dist/src/index.js';
import { localSessionStore } from '../../dist/src/entries/store.js';
import { digestOf } from './digest.mjs';

const [dir, sessionId, command, ...args] = process.argv.slice(2);
const store = localSessionStore({ dir });
const say = (line) => process.stdout.write(`${line}\n`);

/** Counts every write-side file-system call (what write-file-atomic and the lock make) and kills at the K-th. */
function killAt(k) {
  let count = 0;
  for (const name of ['open', 'write', 'fsync', 'close', 'rename', 'unlink', 'mkdir', 'rmdir', 'utimes', 'chown', 'chmod']) {
    const original = fs[name];
    fs[name] = (...callArgs) => {
      count += 1;
      if (count === k) process.kill(process.pid, 'SIGKILL');
      return original(...callArgs);
    };
  }
  syncBuiltinESMExports();
  return () => count;
}

if (command === 'write') {
  const session = await createSession({ store, sessionId, leaseMs: 1000 });
  for (let i = 0; i < Number(args[0]); i += 1) await session.filesystem.write(`/child/${i}.txt`, `child ${i}\n`);
  await session.publish();
  say(await digestOf(session.filesystem));
  await session.dispose();
} else if (command === 'publish-kill') {
  const [seed, n, k] = args.map(Number);
  // A long lease: no renewal adds writes while the publish runs, however slow the machine, so a kill point
  // counted on the dry run falls where it fell there. The next writer takes the lease of this dead process at once.
  const session = await createSession({ store, sessionId, leaseMs: 60_000 });
  for (let i = 0; i < n; i += 1) await session.filesystem.write(`/seed-${seed}/${i}.txt`, `${seed}:${i}\n`.repeat(i + 1));
  await session.filesystem.delete('/base.txt');
  say(await digestOf(session.filesystem));
  const writes = killAt(k);
  await session.publish();
  say(`published ${writes()}`);
  await session.filesystem.dispose();
  process.exit(0); // the lease stays held, as after a crash
}
