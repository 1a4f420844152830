import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { scrubHostPaths } from '../session/scrub.js';
import { SessionStartError } from './usage-error.js';

/**
 * Tells the client why the session could not start, when it could not: every tool call is answered with
 * the reason, and one MCP log message (level error, logger `sessionfs`) goes out once the client has
 * initialized. An MCP client shows its user what a tool answers, not the server's standard error, and a
 * server that exits leaves it only "Connection closed". The reason names no host path: the server's own
 * (`hostDirs`) become `<host path>`, any other absolute path `<path>`.
 */
export function startFailureNotice(server: Server, ready: Promise<unknown>, hostDirs: readonly string[]) {
  let text: string | undefined;
  let initialized = false;
  const log = (data: string): void =>
    void Promise.resolve()
      .then(() => server.sendLoggingMessage({ level: 'error', logger: 'sessionfs', data }))
      .catch(() => undefined);
  const describe = (error: unknown): string => {
    const reason = error instanceof SessionStartError ? error.reason : error instanceof Error ? error.message : String(error);
    return (
      `the session could not start: ${scrubHostPaths(reason, { hostDirs, allAbsolute: true })}. ` +
      'No tool call can run until the server is started again with that fixed.'
    );
  };
  ready.catch((error: unknown) => {
    text = describe(error);
    if (initialized) log(text);
  });
  return {
    /** The client has initialized: the log message may go out now. */
    initialized(): void {
      initialized = true;
      if (text !== undefined) log(text);
    },
    /** A tool call's answer after the start failed with `error`. */
    answer(error: unknown): CallToolResult {
      return { content: [{ type: 'text', text: text ?? describe(error) }], isError: true };
    },
  };
}
