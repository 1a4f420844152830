// The compliance harness lives in src/testing/harness.ts; this path stays for branches that import it here.
export * from '../../src/testing/harness.js';
