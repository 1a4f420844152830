import { InvalidArgumentError } from '../workspace/errors.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';

/**
 * A call-scoped view of the session's workspace, handed to a handler as `context.filesystem`.
 *
 * It forwards every protocol method to the workspace, but:
 * - it counts the operations in flight, so that after an abort the session waits for them to settle before
 *   it restores the snapshot (an in-flight write can never land after the rollback);
 * - once the call is over (`revoke`), every method rejects, so a handler that leaves work running in the
 *   background cannot touch the workspace after its call, nor interleave with the next one;
 * - `dispose` and `seal` are refused: the session owns the workspace's lifetime.
 */
export interface WorkspaceGuard {
  readonly workspace: SnapshotableWorkspace;
  revoke(): void;
  /** Resolves once no operation started through the view is still running. */
  idle(): Promise<void>;
}

/** Each call view's workspace, for code that keeps state per workspace (the tool suite's read tracking). */
const targets = new WeakMap<object, SnapshotableWorkspace>();

/** The workspace behind a call-scoped view; any other workspace as it is. */
export function unguardedWorkspace<W extends object>(workspace: W): W | SnapshotableWorkspace {
  return targets.get(workspace) ?? workspace;
}

export function guardWorkspace(target: SnapshotableWorkspace, toolName: string): WorkspaceGuard {
  let revoked = false;
  const pending = new Set<Promise<void>>();
  const wrappers = new Map<PropertyKey, unknown>();

  const closed = (): Promise<never> =>
    Promise.reject(new InvalidArgumentError(`the ${toolName} call has ended: its filesystem can no longer be used`));

  const view = new Proxy(target, {
    get(object, property) {
      // Getters and methods run against the real workspace (private fields live there).
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const cached = wrappers.get(property);
      if (cached !== undefined) return cached;
      let wrapper: unknown;
      if (property === 'dispose' || property === Symbol.asyncDispose) {
        wrapper = () => Promise.reject(new InvalidArgumentError(`${toolName}: a tool cannot dispose the session's workspace`));
      } else if (property === 'seal') {
        wrapper = () => {
          throw new InvalidArgumentError(`${toolName}: a tool cannot seal the session's workspace`);
        };
      } else {
        const method = value as (...args: unknown[]) => unknown;
        wrapper = (...args: unknown[]): unknown => {
          if (revoked) return closed();
          const result = method.apply(object, args);
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
      }
      wrappers.set(property, wrapper);
      return wrapper;
    },
    set() {
      return false;
    },
    defineProperty() {
      return false;
    },
    deleteProperty() {
      return false;
    },
  });

  targets.set(view, target);
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
