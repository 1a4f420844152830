#!/usr/bin/env node
// The `sessionfs` command as one file: dist/sessionfs.mjs, bundled by esbuild from what tsc emitted.
//
// Why: an MCP client starts the server for every session, and the start was mostly module loading. The
// command loaded ~340 files (~150 of ours, the MCP SDK, zod with its 64 locales, ajv): ~150 ms of a
// ~240 ms start, against ~160 ms for the whole official filesystem server. Bundled, it starts in ~140 ms.
// The library (dist/src) stays unbundled: an application importing sessionfs shares its own copies of zod
// and the SDK.
//
// Left out of the bundle, loaded from node_modules as before: the optional peers (`--store` loads pg and the
// S3 client, the command uses no other), and what src/workspace/lazy-require.ts loads on first use (git objects, the shell interpreter,
// legacy encodings, diffs): a `require` of a name held in a variable, which esbuild leaves to run time.
// Usage: node scripts/bundle-cli.mjs (npm run build runs it after tsc).
import { chmodSync, cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const OPTIONAL_PEERS = ['pg', '@aws-sdk/client-s3', 'openai', '@anthropic-ai/sdk', 'ai', '@langchain/core', 'vitest'];

/** Bundles `entry` (an ES module of dist/) into `outfile`, as the `sessionfs` command is bundled. */
export async function bundleCli(entry, outfile) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    external: OPTIONAL_PEERS,
    // Bundled CommonJS dependencies call `require` for Node's built-ins and read `__filename` (write-file-atomic
    // names its temp files after it): an ES module has neither of its own.
    banner: {
      js: [
        "import { createRequire as __sessionfsRequire } from 'node:module';",
        "import { fileURLToPath as __sessionfsFilePath } from 'node:url';",
        'const require = __sessionfsRequire(import.meta.url);',
        'const __filename = __sessionfsFilePath(import.meta.url);',
      ].join(' '),
    },
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = new URL('../', import.meta.url);
  const outfile = fileURLToPath(new URL('dist/sessionfs.mjs', root));
  await bundleCli(fileURLToPath(new URL('dist/src/cli/main.js', root)), outfile);
  chmodSync(outfile, 0o755);
  // The inspector's page (plain files, no build step): beside the bundled command and beside dist/src/cli.
  const page = fileURLToPath(new URL('src/cli/inspect', root));
  for (const to of ['dist/inspect', 'dist/src/cli/inspect']) cpSync(page, fileURLToPath(new URL(to, root)), { recursive: true });
}
