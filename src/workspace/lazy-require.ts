import { createRequire } from 'node:module';
import { NotSupportedError } from './errors.js';

const load = createRequire(import.meta.url);

/**
 * A dependency loaded on its first use instead of with the module graph: the CLI's start (an MCP server's
 * first answer) paid for engines most sessions never call (git objects, the shell interpreter and its
 * parser, legacy encodings, diffs). Loaded through its CommonJS build, so synchronous code can use it.
 * A broken install is a `NotSupportedError` naming the package only: node's own message lists the
 * requiring files by their host paths, which must not reach a model.
 */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => {
    if (loaded !== undefined) return loaded;
    try {
      loaded = load(id) as T;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'an error';
      throw new NotSupportedError(`the dependency "${id}" cannot be loaded (${code}): reinstall sessionfs's dependencies (npm ci)`);
    }
    return loaded;
  };
}
