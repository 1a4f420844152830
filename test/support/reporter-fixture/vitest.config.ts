import { defineConfig } from 'vitest/config';

// Runs only the fixture files, with the summary reporter the real suite uses.
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['*.fixture.ts'],
    reporters: ['../summary-reporter.ts'],
  },
});
