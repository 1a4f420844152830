import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/create-session.js';
import { tempDirs } from '../../src/testing/harness.js';
import { BACKENDS } from '../support/backends.js';
import { hostTree, runPlain, sandboxAvailable, workspaceTree } from './support.js';

const available = await sandboxAvailable();
const scratch = tempDirs();

/** The backends programs must run on: host (its root is the lower layer) and three that need a mirror. */
const MATRIX = BACKENDS.filter((backend) => ['memory', 'host', 'overlay', 'compose over memory'].includes(backend.name));

const SEED: Record<string, string> = {
  'keep/x.txt': 'kept\n',
  'old/dir/f.txt': 'old\n',
  'mod.txt': 'before\n',
  'gone.txt': 'bye\n',
  'opaque/a.txt': 'a\n',
  'opaque/b.txt': 'b\n',
  'src/index.js': 'export const two = 2;\n',
};

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Ada',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
};

const SCRIPTS: { name: string; script: string; env?: Record<string, string>; skip?: (path: string) => boolean }[] = [
  {
    name: 'node writing, rewriting and deleting files',
    script: `node -e "
      const fs = require('fs');
      fs.mkdirSync('out/deep', { recursive: true });
      fs.writeFileSync('out/deep/data.bin', Buffer.from([0, 1, 2, 255, 10, 13]));
      fs.writeFileSync('mod.txt', 'after\\n');
      fs.appendFileSync('keep/x.txt', 'more\\n');
      fs.unlinkSync('gone.txt');
      fs.writeFileSync('same.txt', fs.readFileSync('src/index.js'));
    "`,
  },
  {
    name: 'sh making, emptying and removing directories',
    script:
      'rm -rf old && mkdir -p old/new/empty && echo y > old/new/g.txt && rm -rf opaque && mkdir opaque && echo z > opaque/c.txt && mkdir -p made/one/two && rmdir made/one/two',
  },
  {
    name: 'git init, add and commit in a directory the program made',
    script:
      'mkdir proj && cd proj && git init -q -b main && echo hello > f.txt && git add f.txt && git commit -q -m first && git log --format=%s',
    env: GIT_ENV,
    // The index holds inode numbers and change times, which differ between any two checkouts.
    skip: (path) => path === 'proj/.git/index',
  },
  {
    name: 'chmod +x, then running the script',
    script: "printf '#!/bin/sh\\necho ran > ran.txt\\n' > run.sh && chmod +x run.sh && ./run.sh && chmod +x src/index.js",
  },
];

describe.skipIf(!available)('a program run by exec leaves the tree it leaves in a plain directory', () => {
  for (const backend of MATRIX) {
    describe(backend.name, () => {
      for (const { name, script, env, skip } of SCRIPTS) {
        it(name, async () => {
          const plain = scratch();
          for (const [path, text] of Object.entries(SEED)) {
            fs.mkdirSync(join(plain, path, '..'), { recursive: true });
            fs.writeFileSync(join(plain, path), text);
          }
          const workspace = backend.open();
          await using session = await createSession({ workspace });
          for (const [path, text] of Object.entries(SEED)) await session.filesystem.write(path, text);

          const direct = runPlain(plain, script, env);
          expect(direct.status, direct.stderr).toBe(0);
          const result = await session.exec(script, { ...(env === undefined ? {} : { env }) });
          expect(result.exitCode, result.stderr).toBe(0);

          // Byte- and mode-exact: every backend here keeps executable bits and links (file kinds).
          expect(await workspaceTree(session.filesystem, skip)).toEqual(hostTree(plain, skip));
          await workspace.dispose();
        });
      }
    });
  }
});
