import type { HydrateProgress } from '../host-mounts/index.js';

export interface ProgressSink {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * Hydration progress on stderr, one line rewritten in place at most every `intervalMs`, then a summary.
 * Silent when `quiet` or when the sink is not a terminal (a client capturing stderr, a log file): MCP clients
 * log a server's stderr, and a line per tick would flood it. Never prints a host path: only counts.
 */
export function hydrationProgress(sink: ProgressSink, options: { quiet: boolean; intervalMs?: number; now?: () => number }) {
  const enabled = !options.quiet && sink.isTTY === true;
  const interval = options.intervalMs ?? 200;
  const now = options.now ?? Date.now;
  let last = -Infinity;
  let latest: HydrateProgress | undefined;
  const line = (p: HydrateProgress) => `sessionfs: hydrating: ${p.files.toLocaleString('en-US')} files, ${formatBytes(p.bytes)}`;
  return {
    enabled,
    onProgress(progress: HydrateProgress): void {
      latest = progress;
      if (!enabled) return;
      const at = now();
      if (at - last < interval) return;
      last = at;
      sink.write(`\r${line(progress)}\x1b[K`);
    },
    /** Ends the progress line with the final counts. */
    done(): void {
      if (enabled && latest !== undefined) sink.write(`\r${line(latest)}, done\x1b[K\n`);
    },
  };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
