import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { readAuditLog } from '../../src/governance/jsonl-sink.js';
import { tempDirs } from '../../src/testing/harness.js';

/**
 * The JSONL sink writes once per event-loop turn; these check the moments a process would otherwise lose
 * what it queued: `dispose()` resolving (the caller then reads the log or exits at once), and SIGTERM or
 * SIGINT (Node emits no 'exit' for them). Each runs a real child process on the built library.
 */
describe('a JSONL audit log is durable at dispose() and on SIGTERM/SIGINT', () => {
  const child = fileURLToPath(new URL('./fixtures/audit-durable-child.mjs', import.meta.url));
  const dir = tempDirs({ until: 'file' })('sessionfs-audit-durable-');
  let runs = 0;

  beforeAll(() => {
    if (!fs.existsSync(fileURLToPath(new URL('../../dist/src/index.js', import.meta.url))))
      throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test');
  });

  async function run(mode: string): Promise<{ file: string; stdout: string; code: number | null; signal: NodeJS.Signals | null }> {
    const file = join(dir, `audit-${(runs += 1)}.jsonl`);
    const proc = spawn(process.execPath, [child, file, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      proc.on('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
    );
    return { file, stdout, code, signal };
  }

  it.each(['dispose-workspace', 'dispose-host', 'dispose-session', 'dispose-given'])(
    'when %s resolves, the file holds every event the memory sink holds',
    async (mode) => {
      const { stdout, code } = await run(mode);
      expect(code).toBe(0);
      const { lines, memory } = JSON.parse(stdout) as { lines: number; memory: number };
      expect(memory).toBeGreaterThanOrEqual(50);
      expect(lines).toBe(memory);
    },
  );

  it.each(['SIGTERM', 'SIGINT'] as const)('%s writes the queued events and still ends the process by that signal', async (name) => {
    const { file, stdout, code, signal } = await run(name);
    expect(stdout).toBe('');
    expect(signal).toBe(name);
    expect(code).toBeNull();
    const events = readAuditLog(file);
    expect(events).toHaveLength(50);
    events.forEach((event, index) => expect(event).toMatchObject({ op: 'write', path: `dir/file-${index}.txt`, outcome: 'ok' }));
  });

  it("leaves a program's own SIGINT listener in charge, the events still written", async () => {
    const { file, stdout, code, signal } = await run('own-SIGINT');
    expect(stdout).toBe('own handler\n');
    expect(signal).toBeNull();
    expect(code).toBe(7);
    expect(readAuditLog(file)).toHaveLength(50);
  });
});
