import type { SnapshotableWorkspace } from '../workspace/types.js';

/** Each view's workspace, for code that keeps state per workspace (the tool suite's read tracking). */
const targets = new WeakMap<object, SnapshotableWorkspace>();

/** The workspace behind a session's view (call-scoped or outside); any other workspace as it is. */
export function unguardedWorkspace<W extends object>(workspace: W): W | SnapshotableWorkspace {
  return targets.get(workspace) ?? workspace;
}

export interface ForwardingViewOptions {
  /** The function the view hands out in place of `method` (called with the workspace as `this` by the wrapper). */
  wrap(method: (...args: unknown[]) => unknown, property: PropertyKey): (...args: unknown[]) => unknown;
  /** Whether assigning or deleting properties on the view reaches the workspace (default: refused). */
  writable?: boolean;
}

/**
 * A Proxy over a workspace that hands out wrapped methods and forwards everything else (getters run against
 * the real workspace, where private fields live). Wrappers are cached per function, so a method patched on
 * the workspace after the view was made is wrapped afresh.
 */
export function forwardingView(target: SnapshotableWorkspace, options: ForwardingViewOptions): SnapshotableWorkspace {
  const wrappers = new WeakMap<object, unknown>();
  const refuse = (): boolean => false;
  const view = new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      let wrapper = wrappers.get(value);
      if (wrapper === undefined) {
        wrapper = options.wrap(value as (...args: unknown[]) => unknown, property);
        wrappers.set(value, wrapper);
      }
      return wrapper;
    },
    ...(options.writable === true ? {} : { set: refuse, defineProperty: refuse, deleteProperty: refuse }),
  });
  // A view over a view (the MCP roots scope over a call's guard) still leads to the workspace itself.
  targets.set(view, targets.get(target) ?? target);
  return view;
}
