import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Host-backend tests spawn git and child processes; two workers match the 2-core CI machine.
    maxWorkers: 2,
  },
});
