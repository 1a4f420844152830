#!/usr/bin/env node
// `npm run example -- <name>`: runs examples/<name>.ts with tsx (a devDependency; Node 20 cannot run
// TypeScript itself). The examples import `sessionfs` from this package's build: `npm ci` (or `npm run build`) first.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const names = readdirSync(new URL('examples/', `file://${root}`))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3))
  .sort();
const name = process.argv[2];
if (name === undefined || !names.includes(name)) {
  console.error(`usage: npm run example -- <name>\n  names: ${names.join(', ')}`);
  process.exit(name === undefined ? 0 : 2);
}
if (!existsSync(`${root}dist/src/index.js`)) {
  console.error('dist/ is missing: run `npm run build` first');
  process.exit(2);
}
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const run = spawnSync(process.execPath, [tsx, `examples/${name}.ts`], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
