import { AsyncLocalStorage } from 'node:async_hooks';
import { AuditLog, registerAuditLog, type AuditedMethod } from './audit.js';

export type { AuditSink } from './audit.js';

type Method = (...args: unknown[]) => Promise<unknown>;

const first = ([path]: unknown[]): unknown => path;
const searched = ([, options]: unknown[]): unknown => (options as { path?: unknown } | undefined)?.path ?? '.';
const none = (): undefined => undefined;

/** How each audited method names its path (never contents); rename and copy name a second one (`to`). */
const PATHS: Record<string, (args: unknown[]) => unknown> = {
  read: first,
  readBytes: first,
  write: first,
  writeBytes: first,
  createReadStream: first,
  createWriteStream: first,
  exists: first,
  stat: first,
  list: ([path]) => path ?? '.',
  glob: searched,
  grep: searched,
  mkdir: first,
  delete: first,
  rename: first,
  copy: first,
  snapshot: none,
  restore: none,
  diff: none,
  patch: none,
  snapshotTree: none,
  writeFiles: none,
};
const TWO_PATHS: ReadonlySet<string> = new Set(['rename', 'copy']);

/**
 * The bytes an operation moved: from its result when it succeeded (no second pass over the content), from
 * its input when it failed (a write's content; a write stream commits with writeBytes, whose staged content
 * has a byteLength too).
 */
const BYTES: Record<string, (args: unknown[], result: unknown) => number | undefined> = {
  write: ([, content], result) =>
    result !== undefined
      ? (result as { bytesWritten: number }).bytesWritten
      : typeof content === 'string'
        ? Buffer.byteLength(content)
        : undefined,
  writeBytes: ([, content], result) =>
    result !== undefined
      ? (result as { bytesWritten: number }).bytesWritten
      : ((content as { byteLength?: unknown } | undefined)?.byteLength as number | undefined),
  readBytes: (_, result) => (result as { content: Uint8Array } | undefined)?.content.byteLength,
};

/** Operations built from other protocol calls on the same workspace: recorded once, not once per inner call. */
const COMPOUND: ReadonlySet<string> = new Set(['patch', 'writeFiles']);
/** The workspace whose compound operation is running now. */
const insideCompound = new AsyncLocalStorage<object>();

/**
 * Puts every protocol method of one workspace behind its audit log: the instance gets its own wrappers
 * (the class's methods, subclass overrides included, are called inside them), so that every backend built
 * on the shared layer is audited the same way and a workspace without sinks pays nothing. A wrapper adds
 * one promise reaction to the call and builds the event only when it ends.
 */
export function auditMethods(workspace: object, log: AuditLog): void {
  let compoundsRunning = 0;
  for (const [name, path] of Object.entries(PATHS)) {
    const method = (workspace as Record<string, unknown>)[name];
    if (typeof method !== 'function') continue;
    const original = method as Method;
    const audited: AuditedMethod = { op: name, path, to: TWO_PATHS.has(name), bytes: BYTES[name] };
    const compound = COMPOUND.has(name);
    Object.defineProperty(workspace, name, {
      configurable: true,
      writable: true,
      value(this: unknown, ...args: unknown[]): Promise<unknown> {
        if (compoundsRunning > 0 && insideCompound.getStore() === workspace) return original.apply(this, args);
        if (!compound) return log.record(audited, args, original, this);
        compoundsRunning += 1;
        const run = () => insideCompound.run(workspace, () => original.apply(this, args));
        return log.record(audited, args, run).finally(() => (compoundsRunning -= 1));
      },
    });
  }
}

/** Gives a workspace its audit log when `sinks` holds any (validated: an array of functions). */
export function auditWorkspace(workspace: object, sinks: unknown): void {
  const log = new AuditLog(sinks);
  if (!log.active) return;
  auditMethods(workspace, log);
  registerAuditLog(workspace, log);
}
