import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { storeDriver } from '../../src/store/store-driver.js';
import { kindsOf } from '../../src/testing/index.js';
import type { BackendDriver } from '../../src/workspace/driver.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';

// A restore leaves protected content exactly as it is: its executable bits and links too, on the backends
// whose snapshotters put protected roots back through the driver (no `restoreExcept`).
const DRIVERS: [string, () => BackendDriver][] = [
  ['memory', () => memoryDriver()],
  ['store', () => storeDriver({ blobs: memoryBlobStore() })],
];

describe.each(DRIVERS)('a restore leaves protected kinds as they are (%s)', (_name, driverOf) => {
  it('keeps the live executable bit and links of a protected root, changing only the rest', async () => {
    const driver = driverOf();
    // Another handle on the same files, as the host is: what it wrote was there when the session's workspace opened.
    const host = createWorkspace(driver);
    await host.write('keep/run.sh', '#!/bin/sh\n', { executable: true });
    const ws = createWorkspace(driver, { protect: ['keep/**'] });
    await ws.write('free.txt', 'before');
    const snapshot = await ws.snapshot();
    await ws.write('free.txt', 'after');
    await host.setExecutable('keep/run.sh', false);
    await host.symlink('run.sh', 'keep/link');
    const result = await ws.restore(snapshot);
    expect(result.skipped.map((entry) => entry.path)).toEqual(['keep']);
    expect(await kindsOf(ws)).toEqual({
      'free.txt': '100644 before',
      'keep/': 'dir',
      'keep/link': '120000 run.sh',
      'keep/run.sh': '100644 #!/bin/sh\n',
    });
  });
});
