import { InvalidArgumentError, ReadOnlyError } from '../workspace/errors.js';
import { protocolMethods } from '../workspace/protocol-methods.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { forwardingView } from './forwarding-view.js';
import { journalRefusal, type UndoJournal } from './undo-journal.js';

/**
 * A call-scoped view of the session's workspace, handed to a handler as `context.filesystem`.
 *
 * It forwards every protocol method to the workspace, but:
 * - it counts the operations in flight, so that after an abort the session waits for them to settle before
 *   it restores the snapshot (an in-flight write can never land after the rollback);
 * - once the call is over (`revoke`), every method rejects, so a handler that leaves work running in the
 *   background cannot touch the workspace after its call, nor interleave with the next one;
 * - `dispose` and `seal` are refused: the session owns the workspace's lifetime;
 * - with an undo journal (the session's `rollback: 'journal'`), each changing method runs after the journal
 *   recorded what it changes, one at a time;
 * - for a tool annotated `readOnlyHint` (which runs without a snapshot before it), only the methods in
 *   {@link READ_METHODS} work: anything else is `ReadOnlyError`, so a tool that says it only looks cannot
 *   change what no snapshot could roll back.
 */
export interface WorkspaceGuard {
  readonly workspace: SnapshotableWorkspace;
  revoke(): void;
  /** Resolves once no operation started through the view is still running. */
  idle(): Promise<void>;
}

export { unguardedWorkspace } from './forwarding-view.js';

/** What a read-only tool may call: the protocol's reads, an allow-list (a workspace's own extra methods are refused). */
export const READ_METHODS: ReadonlySet<PropertyKey> = new Set(protocolMethods((method) => method.kind === 'read'));

/** The changing methods that return a promise, so that a journal can record before they run. */
const AWAITABLE_METHODS: ReadonlySet<PropertyKey> = new Set([...protocolMethods((method) => method.returns === 'promise'), 'exec']);

export function guardWorkspace(
  target: SnapshotableWorkspace,
  toolName: string,
  options: { readOnly?: boolean; journal?: UndoJournal } = {},
): WorkspaceGuard {
  let revoked = false;
  const pending = new Set<Promise<void>>();

  const closed = (): Promise<never> =>
    Promise.reject(new InvalidArgumentError(`the ${toolName} call has ended: its filesystem can no longer be used`));

  const view = forwardingView(target, {
    wrap(method, property) {
      if (property === 'dispose' || property === Symbol.asyncDispose) {
        return () => Promise.reject(new InvalidArgumentError(`${toolName}: a tool cannot dispose the session's workspace`));
      }
      if (property === 'seal') {
        return () => {
          throw new InvalidArgumentError(`${toolName}: a tool cannot seal the session's workspace`);
        };
      }
      if (options.readOnly === true && !READ_METHODS.has(property)) {
        return (...args: unknown[]) =>
          Promise.reject(
            new ReadOnlyError(
              typeof args[0] === 'string' ? args[0] : undefined,
              `${toolName} is declared read-only (readOnlyHint), so it runs without a snapshot and may not call ${String(property)}`,
            ),
          );
      }
      const journal = READ_METHODS.has(property) ? undefined : options.journal;
      if (journal !== undefined && !AWAITABLE_METHODS.has(property)) return () => Promise.reject(journalRefusal(toolName, property));
      return (...args: unknown[]): unknown => {
        if (revoked) return closed();
        const result =
          journal === undefined ? method.apply(target, args) : journal.change(property, args, async () => method.apply(target, args));
        if (result instanceof Promise) {
          const settled = result.then(
            () => undefined,
            () => undefined,
          );
          pending.add(settled);
          void settled.then(() => pending.delete(settled));
        }
        return result;
      };
    },
  });
  return {
    workspace: view,
    revoke() {
      revoked = true;
    },
    async idle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
