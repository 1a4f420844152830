/**
 * The compliance suite every `Workspace` backend must pass, exported as `sessionfs/testing` so that anyone
 * writing a backend can hold it to the same contract:
 *
 * ```ts
 * import { describeWorkspaceCompliance } from 'sessionfs/testing';
 * describeWorkspaceCompliance('my backend', { create: async (options) => new MyWorkspace(options) });
 * ```
 *
 * It runs under vitest. The suite disposes every workspace it creates.
 */
import { afterEach, describe, expect } from 'vitest';
import { bulkWrites } from './bulk-write.js';
import { bytesNeverAlias } from './bytes.js';
import type { ComplianceHarness } from './harness.js';
import { compareAndSwap } from './compare-and-swap.js';
import { forkSemantics } from './fork.js';
import { mutations } from './mutations.js';
import { pathRules } from './paths.js';
import { protectedPaths } from './protected.js';
import { readAndWrite } from './read-write.js';
import { restorePreview } from './restore-preview.js';
import { concurrency, readOnlyMode } from './safety.js';
import { longCallRules } from './long-calls.js';
import { listingAndSearch } from './search.js';
import { searchBounds } from './search-bounds.js';
import { searchText } from './search-text.js';
import { searchGitignore } from './search-gitignore.js';
import { snapshotSemantics } from './snapshots.js';
import { streams } from './streams.js';
import { symlinkRules } from './symlinks.js';
import { fileKinds } from './file-kinds.js';
import { fileVersions } from './versions.js';
import { watchEvents } from './watch.js';

export type { ComplianceHarness, CreateOptions, ExpectErrorOptions } from './harness.js';
export { contentsOf, expectError, expectNoHostPath, tempDirs, workspaces } from './harness.js';
export { kindsOf, plantKinds } from './file-kinds.js';
export { strictDriver, type StrictViolationSink } from './strict-driver.js';

export function describeWorkspaceCompliance(name: string, harness: ComplianceHarness): void {
  describe(`${name}: Workspace compliance`, () => {
    if (harness.violations !== undefined) {
      const violations = harness.violations.bind(harness);
      afterEach(() => {
        expect(violations(), 'driver calls outside their preconditions').toEqual([]);
      });
    }
    pathRules(harness);
    readAndWrite(harness);
    compareAndSwap(harness);
    fileVersions(harness);
    listingAndSearch(harness);
    searchBounds(harness);
    searchText(harness);
    searchGitignore(harness);
    mutations(harness);
    bulkWrites(harness);
    snapshotSemantics(harness);
    readOnlyMode(harness);
    concurrency(harness);
    symlinkRules(harness);
    fileKinds(harness);
    watchEvents(harness);
    longCallRules(harness);
    forkSemantics(harness);
    streams(harness);
    protectedPaths(harness);
    restorePreview(harness);
    bytesNeverAlias(harness);
  });
}
