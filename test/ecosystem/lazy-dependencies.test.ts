import { expect, it } from 'vitest';
import { lazyRequire } from '../../src/workspace/lazy-require.js';

// Heavy dependencies load on first use; a broken install must not hand node's "Require stack" (host
// paths of the requiring files) to whoever sees the error, a model included.
it('a dependency that cannot be loaded is a NotSupportedError naming only the package', () => {
  const missing = lazyRequire<unknown>('sessionfs-no-such-package');
  let caught: unknown;
  try {
    missing();
  } catch (error) {
    caught = error;
  }
  expect(caught).toMatchObject({ name: 'NotSupportedError', code: 'ENOTSUP' });
  const message = (caught as Error).message;
  expect(message).toContain('"sessionfs-no-such-package" cannot be loaded (MODULE_NOT_FOUND)');
  expect(message).not.toMatch(/\/|Require stack/);
  expect(lazyRequire<{ sep: string }>('node:path')().sep).toBe('/'); // and a present one loads, once
});
