import { AsyncLocalStorage } from 'node:async_hooks';
import { AuditLog, registerAuditLog, type AuditDetail } from './audit.js';

export type { AuditSink } from './audit.js';

type Method = (...args: unknown[]) => Promise<unknown>;

/** How each audited method names its paths and byte counts (never contents). */
const DETAILS: Record<string, (args: unknown[]) => AuditDetail> = {
  read: ([path]) => ({ path }),
  readBytes: ([path]) => ({ path }),
  write: ([path, content]) => ({ path, bytes: typeof content === 'string' ? Buffer.byteLength(content) : undefined }),
  // A write stream commits with writeBytes: its staged content has a byteLength too.
  writeBytes: ([path, content]) => ({ path, bytes: (content as { byteLength?: unknown } | undefined)?.byteLength as number | undefined }),
  createReadStream: ([path]) => ({ path }),
  createWriteStream: ([path]) => ({ path }),
  exists: ([path]) => ({ path }),
  stat: ([path]) => ({ path }),
  list: ([path]) => ({ path: path ?? '.' }),
  glob: ([, options]) => ({ path: (options as { path?: unknown } | undefined)?.path ?? '.' }),
  grep: ([, options]) => ({ path: (options as { path?: unknown } | undefined)?.path ?? '.' }),
  mkdir: ([path]) => ({ path }),
  delete: ([path]) => ({ path }),
  rename: ([path, to]) => ({ path, to }),
  copy: ([path, to]) => ({ path, to }),
  snapshot: () => ({}),
  restore: () => ({}),
  diff: () => ({}),
  patch: () => ({}),
  snapshotTree: () => ({}),
  writeFiles: () => ({}),
};

/** Operations built from other protocol calls on the same workspace: recorded once, not once per inner call. */
const COMPOUND: ReadonlySet<string> = new Set(['patch', 'writeFiles']);
/** The workspace whose compound operation is running now. */
const insideCompound = new AsyncLocalStorage<object>();

/** What a result says about bytes moved, for the methods whose input does not. */
const RESULT_BYTES: Record<string, (result: unknown) => number | undefined> = {
  readBytes: (result) => (result as { content: Uint8Array }).content.byteLength,
};

/**
 * Puts every protocol method of one workspace behind its audit log: the instance gets its own wrappers
 * (the class's methods, subclass overrides included, are called inside them), so that every backend built
 * on the shared layer is audited the same way and a workspace without sinks pays nothing.
 */
export function auditMethods(workspace: object, log: AuditLog): void {
  for (const [name, detail] of Object.entries(DETAILS)) {
    const method = (workspace as Record<string, unknown>)[name];
    if (typeof method !== 'function') continue;
    const original = method as Method;
    const measure = RESULT_BYTES[name];
    const compound = COMPOUND.has(name);
    Object.defineProperty(workspace, name, {
      configurable: true,
      writable: true,
      value(this: unknown, ...args: unknown[]): Promise<unknown> {
        if (insideCompound.getStore() === workspace) return original.apply(this, args);
        const run = compound ? () => insideCompound.run(workspace, () => original.apply(this, args)) : () => original.apply(this, args);
        return log.record(name, detail(args), run, measure);
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
