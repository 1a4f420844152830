import { refuseRenamed, storeNamespaceRequest, type CreateSessionOptions } from './options.js';
import { openWorkspaceSession } from './session.js';
import { openStoredSession, type StoreSessionOptions } from './stored-session.js';
import type { HydratedSession, RemoteSession } from './types.js';

export type { CreateSessionOptions } from './options.js';
export type { StoreSessionOptions } from './stored-session.js';

/**
 * The one way to make a session. With `store` and `sessionId`: the session whose head lives in that
 * `SessionStore` (opened in O(1), one writer at a time, published after each successful call and on
 * dispose; `fork` opens a copy, `readOnly` a view). Otherwise what an orchestrator calls per agent session:
 * a workspace on the chosen backend (or the ready one given, from any backend, or a namespace user's),
 * hydrated from the allow-listed host sources (then sealed when `readOnly`), with `runTool` rolling back every
 * failed call. See docs/sessions-and-rollback.md.
 */
export function createSession(options: StoreSessionOptions): Promise<RemoteSession>;
export function createSession(options: CreateSessionOptions): Promise<HydratedSession>;
export async function createSession(options: CreateSessionOptions | StoreSessionOptions): Promise<HydratedSession> {
  if (options !== null && typeof options === 'object') refuseRenamed(options);
  if (options !== null && typeof options === 'object' && 'store' in options) return openStoredSession(options);
  const stored = storeNamespaceRequest(options);
  if (stored !== undefined) return stored.namespace.open(stored.user, { readOnly: options.readOnly === true });
  return openWorkspaceSession(options);
}
