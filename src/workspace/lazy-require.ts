import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * A dependency loaded on its first use instead of with the module graph: the CLI's start (an MCP server's
 * first answer) paid for engines most sessions never call (git objects, the shell interpreter and its
 * parser, legacy encodings, diffs). Loaded through its CommonJS build, so synchronous code can use it.
 */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load(id) as T);
}
