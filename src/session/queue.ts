import { AsyncLocalStorage } from 'node:async_hooks';
import { protocolMethods } from '../workspace/protocol-methods.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { forwardingView } from './forwarding-view.js';

const settle = (): undefined => undefined;

/** `start()`, a synchronous throw as a rejection (as when it runs from the tail). */
function startNow<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * A session's order of work, so that a rollback never undoes a change it did not make.
 *
 * Calls, rollbacks, resets and dispose run one at a time, in the order they were asked for (`exclusive`).
 * An operation on `session.filesystem` from outside a call (`outside`) waits for every exclusive task asked
 * for before it, and every exclusive task asked for after it waits for it; outside operations run
 * concurrently with each other. So an orchestrator's write lands either before a call's snapshot or after
 * its rollback, never in between, and a read never sees a call half done.
 */
export class SessionQueue {
  #tail: Promise<unknown> = Promise.resolve();
  readonly #outside = new Set<Promise<undefined>>();
  /** Set while an exclusive task (and whatever it starts) runs: its own operations must not wait for it. */
  readonly #running = new AsyncLocalStorage<true>();
  /** Exclusive tasks asked for whose turn in the tail has not settled yet. */
  #exclusives = 0;
  readonly #settleExclusive = (): undefined => {
    this.#exclusives -= 1;
    return undefined;
  };

  exclusive<T>(task: () => Promise<T>): Promise<T> {
    // Only the outside operations asked for before this task: later ones wait for it (they see it in the tail).
    const earlier = this.#outside.size === 0 ? undefined : [...this.#outside];
    const start = (): Promise<T> =>
      earlier === undefined ? this.#running.run(true, task) : Promise.all(earlier).then(() => this.#running.run(true, task));
    // Nothing asked for before it still running: it starts now rather than a turn later.
    const run = this.#exclusives === 0 && earlier === undefined ? startNow(start) : this.#tail.then(start, start);
    this.#exclusives += 1;
    this.#tail = run.then(this.#settleExclusive, this.#settleExclusive);
    return run;
  }

  /**
   * Runs `operation` in order, as described above; at once when it comes from the running exclusive task
   * itself (a handler or the session using a reference to `session.filesystem` taken outside), which would
   * otherwise wait for itself.
   */
  /** Whether the code running now is an exclusive task's (or started by one). */
  inExclusive(): boolean {
    return this.#running.getStore() === true;
  }

  outside<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#running.getStore() === true) return operation();
    const run = this.#tail.then(operation);
    const settled = run.then(settle, settle);
    this.#outside.add(settled);
    void settled.then(() => this.#outside.delete(settled));
    return run;
  }
}

/** The protocol's file and snapshot operations: every one returns a promise (the typed-error tests call each). */
export const WORKSPACE_OPERATIONS = protocolMethods((method) => method.returns === 'promise' && method.kind !== 'lifetime');

/**
 * Protocol methods that return a promise: queued from outside a call whatever way a workspace implements
 * them (the built-in workspace's return their promise from a plain function).
 */
const ASYNC_METHODS = new Set<PropertyKey>([...WORKSPACE_OPERATIONS, 'exec', 'dispose', Symbol.asyncDispose]);

const AsyncFunction = (async () => undefined).constructor;
const isAsyncFunction = (value: unknown): boolean => value instanceof AsyncFunction;

/** What the session does around an operation on `session.filesystem` from outside a call. */
export interface OutsideHooks {
  /** Waited for before the operation runs (the session holds changes until the workspace's starting state is recorded). */
  before?(property: PropertyKey, args: readonly unknown[]): Promise<void> | undefined;
  /** Told once the operation settled (a write stream: once its commit did), whether it succeeded or not. */
  after?(property: PropertyKey, args: readonly unknown[]): void;
}

/**
 * `session.filesystem` as code outside a tool call sees it: every asynchronous method goes through
 * `queue.outside`, between the hooks; synchronous ones (`seal`, getters) act at once. Assignments reach the
 * workspace (a test may patch a method).
 */
export function outsideView(target: SnapshotableWorkspace, queue: SessionQueue, hooks: OutsideHooks = {}): SnapshotableWorkspace {
  const after = (property: PropertyKey, args: readonly unknown[]): void => hooks.after?.(property, args);
  return forwardingView(target, {
    writable: true,
    wrap(method, property) {
      const isAsync = ASYNC_METHODS.has(property) || isAsyncFunction(method);
      if (!isAsync) return (...args: unknown[]): unknown => method.apply(target, args);
      if (property === 'createWriteStream')
        return (...args: unknown[]): Promise<unknown> =>
          queue.outside(async () => {
            await hooks.before?.(property, args);
            const stream = (await method.apply(target, args)) as WritableStream<Uint8Array>;
            return commitInOrder(stream, queue, () => after(property, args));
          });
      return (...args: unknown[]): Promise<unknown> =>
        queue.outside(async () => {
          await hooks.before?.(property, args);
          try {
            return await method.apply(target, args);
          } finally {
            after(property, args);
          }
        });
    },
  });
}

/**
 * A write stream opened from outside: its bytes go straight to the staged file, and its commit (the close)
 * waits for a running call like any outside write, so that call's rollback never undoes it.
 */
function commitInOrder(stream: WritableStream<Uint8Array>, queue: SessionQueue, committed: () => void): WritableStream<Uint8Array> {
  const writer = stream.getWriter();
  return new WritableStream<Uint8Array>({
    write: (chunk) => writer.write(chunk),
    close: () => queue.outside(() => writer.close().finally(committed)),
    abort: (reason) => writer.abort(reason),
  });
}
