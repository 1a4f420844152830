#!/usr/bin/env node
// Runs every bench (or the one named: `npm run bench -- memory-snapshot`) against the built library,
// each in its own process with --expose-gc so heap figures are measured after a full collection.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv[2];
const benches = readdirSync(here)
  .filter((name) => name.endsWith('.mjs') && name !== 'run.mjs' && !name.startsWith('_'))
  .filter((name) => wanted === undefined || name === wanted || name === `${wanted}.mjs`)
  .sort();
if (benches.length === 0) {
  console.error(
    `no bench named ${wanted}; available: ${readdirSync(here)
      .filter((n) => n.endsWith('.mjs') && n !== 'run.mjs')
      .join(', ')}`,
  );
  process.exit(2);
}
let failed = 0;
for (const bench of benches) {
  console.error(`# ${bench}`);
  const result = spawnSync(process.execPath, ['--expose-gc', join(here, bench), ...process.argv.slice(3)], { stdio: 'inherit' });
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
