import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { RootsListChangedNotificationSchema, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import type { NormalizedPath } from '../workspace/paths.js';
import { resolveClientRoots, resolveHostAreas, type HostArea } from './mcp-roots.js';

/** How long the server waits for the client's answer to `roots/list` before it goes on without roots. */
const ROOTS_TIMEOUT_MS = 10_000;

export interface ClientRoots {
  /**
   * Resolves once the latest `roots/list` the server asked for is answered and judged (tool calls wait for
   * it); `undefined` when none is outstanding, so that a call need not wait a turn for nothing.
   */
  settled(): Promise<void> | undefined;
  /** The workspace paths the tools are limited to, or `undefined` for the whole workspace. */
  scope(): readonly NormalizedPath[] | undefined;
  /**
   * A message arrived (a transport's direct lane says so before the SDK sees it): the roots are asked for at
   * once when it is `initialized` or `roots/list_changed`, so that a call read right after it waits for them.
   * The SDK runs a notification's handler a turn later, after such a call would have started.
   */
  received(method: string): void;
}

/**
 * MCP roots on `server`: when the client declares the `roots` capability, asks for `roots/list` once the
 * connection is initialized and again on every `notifications/roots/list_changed`, judges each root
 * ({@link resolveClientRoots}), tells the client what it accepted and refused as log messages, and calls
 * `onScopeChange` when the scope changes. Needs the `logging` capability declared on `server`.
 */
export function serveClientRoots(
  server: Server,
  options: { areas: readonly HostArea[]; redact: (text: string) => string; onScopeChange: () => Promise<void> },
): ClientRoots {
  let scope: readonly NormalizedPath[] | undefined;
  let latest: Promise<void> = Promise.resolve();
  let outstanding = 0;
  const areas = resolveHostAreas(options.areas);

  // The verdicts name only the URI the client sent and workspace paths, so they go as they are (redacting would
  // hide the client's own URI). A message that cannot be sent (the connection closed meanwhile) is dropped.
  const log = (level: LoggingLevel, data: string): Promise<void> =>
    Promise.resolve()
      .then(() => server.sendLoggingMessage({ level, logger: 'sessionfs.roots', data }))
      .catch(() => undefined);

  const refresh = async (): Promise<void> => {
    let roots: readonly { uri: string }[];
    try {
      ({ roots } = await server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS }));
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      await log('warning', `could not get the client's roots (${options.redact(why)}); the tools keep the workspace as it is`);
      return;
    }
    const resolution = await resolveClientRoots(roots, await areas);
    for (const verdict of resolution.verdicts) await log(verdict.accepted ? 'info' : 'error', verdict.message);
    if (roots.length > 0 && resolution.verdicts.every((v) => !v.accepted))
      await log('warning', 'no root was accepted: the tools keep the whole workspace the server was started with');
    const changed = JSON.stringify(scope) !== JSON.stringify(resolution.scope);
    scope = resolution.scope;
    if (changed) await options.onScopeChange();
  };
  const ask = () => {
    if (server.getClientCapabilities()?.roots === undefined) return;
    outstanding += 1;
    latest = latest.then(refresh).finally(() => (outstanding -= 1));
  };

  // Asked for on receipt (`received`) already: the SDK's handler for the same message then asks nothing more.
  let askedOnReceipt = 0;
  const notified = () => {
    if (askedOnReceipt > 0) askedOnReceipt -= 1;
    else ask();
  };
  server.oninitialized = notified;
  server.setNotificationHandler(RootsListChangedNotificationSchema, notified);
  return {
    settled: () => (outstanding === 0 ? undefined : latest),
    scope: () => scope,
    received(method) {
      if (method !== 'notifications/initialized' && method !== 'notifications/roots/list_changed') return;
      askedOnReceipt += 1;
      ask();
    },
  };
}
