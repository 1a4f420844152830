#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCommandLine, UsageError } from './args.js';
import { runDemo } from './demo.js';
import { serveMcp } from './serve.js';
import { scrubHostPaths } from '../session/scrub.js';

/** Runs the `sessionfs` command; resolves to the process exit code (the mcp command keeps serving). */
export async function main(argv: readonly string[]): Promise<number> {
  let command;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`sessionfs: ${error.message}\nRun 'sessionfs --help' for usage.\n`);
      return 2;
    }
    throw error;
  }
  switch (command.command) {
    case 'help':
      process.stdout.write(command.usage);
      return 0;
    case 'version':
      process.stdout.write(`${packageVersion()}\n`);
      return 0;
    case 'demo':
      await runDemo();
      return 0;
    case 'mcp':
      return (await serveMcp({ ...command, version: packageVersion() })) ? 0 : 1;
  }
}

function packageVersion(): string {
  // The bundled command (dist/sessionfs.mjs), dist/src/cli/main.js and src/cli/main.ts sit at different
  // depths below the package root.
  for (const relative of ['../package.json', '../../../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'sessionfs' && manifest.version !== undefined) return manifest.version;
    } catch {
      // try the next candidate
    }
  }
  return '0.0.0';
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (error: unknown) => {
      // Never print a stack or a host path: just what went wrong, in workspace terms where possible.
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`sessionfs: ${scrubHostPaths(message, { hostDirs: [process.cwd()] })}\n`);
      process.exitCode = 1;
    },
  );
}
