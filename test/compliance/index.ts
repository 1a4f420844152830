// The compliance suite lives in src/testing/ (shipped as `sessionfs/testing`); this path stays for branches
// that still import it from here.
export * from '../../src/testing/index.js';
