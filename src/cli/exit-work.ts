import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { HydratedSession } from '../session/index.js';
import type { WorkspaceSnapshot } from '../workspace/types.js';
import { scrubHostPaths } from '../session/scrub.js';
import { callProgress, type ProgressDisplay, type ProgressSink } from './progress.js';

export interface ExitWorkOptions {
  /** Where to write the session's git patch (from the state it started in to the state at exit). */
  patchOut?: string;
  /** Write the changes back to the mounts' host paths at exit, leaving conflicting files alone. */
  writeBack?: boolean;
  /** Host paths no message may show (mounts, allowed roots). */
  redact: readonly string[];
  /** When the patch and write-back show their progress on stderr (default: on a terminal). */
  progress?: ProgressDisplay;
}

/**
 * What `sessionfs mcp --patch-out FILE --write-back` does when the server stops (stdin closed, SIGINT,
 * SIGTERM, SIGHUP): the patch first (a record of the work, whatever write-back then finds), then the
 * write-back with `onConflict: 'skip'`: a host file changed since hydration is never overwritten and is
 * reported on stderr by its workspace path. Returns `finish`, which says whether everything went through
 * (false when a conflict was left or a step failed: the process then exits with status 1).
 */
export async function prepareExitWork(
  session: Pick<HydratedSession, 'filesystem' | 'writeBack'>,
  options: ExitWorkOptions,
  stderr: NodeJS.WritableStream = process.stderr,
): Promise<() => Promise<boolean>> {
  const start: WorkspaceSnapshot | undefined =
    options.patchOut === undefined ? undefined : await session.filesystem.snapshot({ tag: 'sessionfs mcp start' });
  const say = (line: string): void => {
    stderr.write(`sessionfs: ${scrubHostPaths(line, { hostDirs: options.redact })}\n`);
  };
  const display = options.progress ?? { quiet: false };
  const shown = (label: string) => callProgress(stderr as NodeJS.WritableStream & ProgressSink, label, display);
  return async () => {
    let ok = true;
    if (options.patchOut !== undefined && start !== undefined) {
      try {
        const progress = shown('writing the patch');
        const patch = await session.filesystem.patch(start, undefined, { onProgress: progress.onProgress });
        progress.done();
        await writeAtomically(resolve(options.patchOut), patch);
        const files = patch.match(/^diff --git /gm)?.length ?? 0;
        say(`wrote the session's patch (${files} ${files === 1 ? 'file' : 'files'} changed) to ${options.patchOut}`);
      } catch (error) {
        ok = false;
        say(`could not write the patch: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (options.writeBack === true) {
      try {
        const progress = shown('writing back');
        const result = await session.writeBack({ onConflict: 'skip', onProgress: progress.onProgress });
        progress.done();
        say(`wrote back ${result.written.length} changed and deleted ${result.deleted.length} files in the mounts`);
        for (const conflict of result.conflicts)
          say(`write-back conflict, left as it is on the host: ${conflict.path} (${conflict.reason})`);
        if (result.conflicts.length > 0) ok = false;
      } catch (error) {
        ok = false;
        say(`write-back failed, nothing more was written: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return ok;
  };
}

/** Temp file beside the target, then rename: a reader never sees half a patch. */
export async function writeAtomically(path: string, content: string): Promise<void> {
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.sessionfs-patch.tmp`);
  try {
    await writeFile(temp, content, { flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
