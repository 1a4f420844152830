import { formatBytes } from '../text/format-bytes.js';
import type { HydrateProgress } from '../sources/index.js';
import type { Progress } from '../workspace/progress.js';

export interface ProgressSink {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** When progress is shown: never with `quiet`; on a terminal; elsewhere only when `force`d (`--progress`). */
export interface ProgressDisplay {
  quiet: boolean;
  /** Show it even when the sink is not a terminal (one line per update instead of a line rewritten in place). */
  force?: boolean;
  intervalMs?: number;
  now?: () => number;
}

/**
 * One long piece of work's progress on stderr: on a terminal one line rewritten in place at most every
 * `intervalMs`, then a summary; elsewhere (with `force`) a plain line per update, throttled the same way.
 * Silent when `quiet`, and when the sink is not a terminal unless forced: MCP clients log a server's
 * stderr, and a line per tick would flood it. Never prints a host path: only counts.
 */
function workProgress<P>(sink: ProgressSink, label: string, describe: (progress: P) => string, options: ProgressDisplay) {
  const tty = sink.isTTY === true;
  const enabled = !options.quiet && (tty || options.force === true);
  const interval = options.intervalMs ?? 200;
  const now = options.now ?? Date.now;
  let last = -Infinity;
  let latest: P | undefined;
  const line = (progress: P, end = ''): string => {
    const text = `sessionfs: ${label}: ${describe(progress)}${end}`;
    return tty ? `\r${text}\x1b[K${end === '' ? '' : '\n'}` : `${text}\n`;
  };
  return {
    enabled,
    onProgress(progress: P): void {
      latest = progress;
      if (!enabled) return;
      const at = now();
      if (at - last < interval) return;
      last = at;
      sink.write(line(progress));
    },
    /** Ends the progress line with the final counts. */
    done(): void {
      if (enabled && latest !== undefined) sink.write(line(latest, ', done'));
    },
  };
}

/** Hydration: files and bytes copied so far. */
export function hydrationProgress(sink: ProgressSink, options: ProgressDisplay) {
  const count = (p: HydrateProgress) => `${p.files.toLocaleString('en-US')} files, ${formatBytes(p.bytes)}`;
  return workProgress(sink, 'hydrating', count, options);
}

/** Any long call's `Progress` (writing the patch, writing back): entries done, of how many once known. */
export function callProgress(sink: ProgressSink, label: string, options: ProgressDisplay) {
  const count = (p: Progress) =>
    p.total === undefined ? `${p.done.toLocaleString('en-US')}` : `${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')}`;
  return workProgress(sink, label, count, options);
}
