import { spawnSync } from 'node:child_process';

/**
 * Matching lines as ripgrep prints them (one per line with -n), counted: what an agent that spawns ripgrep
 * pays. No `--hidden`, as sessionfs's grep skips dot-named paths unless asked, so both count the same lines.
 */
export function ripgrepCount(cwd, pattern) {
  const result = spawnSync('rg', ['-n', '--no-ignore', '--no-config', '--', pattern, '.'], {
    cwd,
    maxBuffer: 1 << 30,
    encoding: 'buffer',
  });
  if (result.status !== 0 && result.status !== 1) throw new Error(`rg failed: ${result.stderr}`);
  let lines = 0;
  for (const byte of result.stdout) if (byte === 10) lines += 1;
  return lines;
}
