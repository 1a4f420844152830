import type { Reporter, TestModule, TestSuite } from 'vitest/node';

/**
 * Ends the run with one plain line (`tests: N passed, M failed, K skipped`) that CI and humans can read
 * without knowing vitest's own summary format. Printed after the default reporter's summary.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedHere += 1;
        else skipped += 1;
      }
      // A module that failed to load, or a suite whose hook threw (its tests then count as skipped), fails
      // the run without a failed test: count it, so the line never says 0 failed when vitest exits 1.
      for (const suite of module.children.allSuites()) if (suite.state() === 'failed' && !hasFailedTest(suite)) failedHere += 1;
      if (module.state() === 'failed' && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

function hasFailedTest(suite: TestSuite): boolean {
  for (const test of suite.children.allTests()) if (test.result().state === 'failed') return true;
  return false;
}
