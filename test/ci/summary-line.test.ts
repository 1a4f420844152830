import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('../support/reporter-fixture/', import.meta.url));

// .ci/run's last line is what CI and people read: it must never say 0 failed when vitest exits 1.
it('the summary line counts a suite whose beforeAll threw as failed', async () => {
  const run = await execa('npx', ['vitest', 'run', '--config', 'vitest.config.ts'], { cwd: FIXTURE, reject: false, env: { CI: '' } });
  expect(run.exitCode).toBe(1);
  expect(run.stdout.trim().split('\n').at(-1)).toBe('tests: 1 passed, 1 failed, 1 skipped');
}, 120_000);
