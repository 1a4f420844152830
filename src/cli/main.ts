#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCommandLine, SessionInUseError, UsageError } from './args.js';
import { runDemo } from './demo.js';
import { serveMcp } from './serve.js';
import { scrubHostPaths } from '../session/scrub.js';

/** Runs the `sessionfs` command; resolves to the process exit code (the mcp command keeps serving). */
export async function main(argv: readonly string[]): Promise<number> {
  let command;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return usageError(error);
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
      try {
        return (await serveMcp({ ...command, version: packageVersion() })) ? 0 : 1;
      } catch (error) {
        // A flag naming a host path that cannot serve (checked before the session starts), or a session in use.
        if (error instanceof UsageError || error instanceof SessionInUseError) return commandError(error);
        throw error;
      }
    case 'inspect':
      try {
        const { runInspect } = await import('./inspect.js');
        return await runInspect(command);
      } catch (error) {
        return commandError(error);
      }
    case 'sessions':
      try {
        const { runSessions } = await import('./sessions.js');
        return await runSessions(command);
      } catch (error) {
        return commandError(error);
      }
  }
}

/** A usage error exits 2, a session open elsewhere 3, a failed `sessions` command 1; anything else is thrown on. */
async function commandError(error: unknown): Promise<number> {
  if (error instanceof UsageError) return usageError(error);
  if (error instanceof SessionInUseError) {
    process.stderr.write(`sessionfs: ${error.message}\n`);
    return 3;
  }
  const { SessionsCommandError } = await import('./sessions.js');
  const { WorkspaceError } = await import('../workspace/errors.js');
  if (error instanceof SessionsCommandError || error instanceof WorkspaceError) {
    process.stderr.write(`sessionfs: ${error.message}\n`);
    return 1;
  }
  throw error;
}

/** A usage error is the user's own mistake: said with the values they gave, on stderr (exit status 2). */
function usageError(error: UsageError): number {
  process.stderr.write(`sessionfs: ${error.message}\nRun 'sessionfs --help' for usage.\n`);
  return 2;
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
