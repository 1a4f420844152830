import { AuditLog, NOT_AUDITED, registerAuditLog, type AuditedMethod, type SelfAudit } from './audit.js';

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
const BYTES: Record<string, (result: unknown, content: unknown) => number | undefined> = {
  write: (result, content) =>
    result !== undefined
      ? (result as { bytesWritten: number }).bytesWritten
      : typeof content === 'string'
        ? Buffer.byteLength(content)
        : undefined,
  writeBytes: (result, content) =>
    result !== undefined
      ? (result as { bytesWritten: number }).bytesWritten
      : ((content as { byteLength?: unknown } | undefined)?.byteLength as number | undefined),
  readBytes: (result) => (result as { content: Uint8Array } | undefined)?.content.byteLength,
};

/** Every audited method, made once (a log keeps per-method state by `index`). */
const METHODS: Record<string, AuditedMethod> = Object.fromEntries(
  Object.keys(PATHS).map((op, index) => [op, { op, index, path: PATHS[op] ?? none, to: TWO_PATHS.has(op), bytes: BYTES[op] }]),
);
const method = (op: string): AuditedMethod => METHODS[op] as AuditedMethod;

/**
 * The methods the shared layer's workspace records from inside its own body (`SelfAudit`), the hottest
 * ones: a wrapper's extra promise per call cost them more than the rest of the audit.
 */
export const SELF_AUDITED = {
  read: method('read'),
  readBytes: method('readBytes'),
  write: method('write'),
  writeBytes: method('writeBytes'),
} as const;

/** Operations built from other protocol calls on the same workspace: recorded once, not once per inner call. */
const COMPOUND: ReadonlySet<string> = new Set(['patch', 'writeFiles']);

/**
 * Puts every protocol method of one workspace but the self-audited ones behind its audit log: the instance
 * gets its own wrappers (the class's methods, subclass overrides included, are called inside them), so
 * that every backend built on the shared layer is audited the same way and a workspace without sinks pays
 * nothing. A wrapper adds one promise reaction to the call and builds the event only when it ends.
 */
export function auditMethods(workspace: object, log: AuditLog): void {
  for (const name of Object.keys(PATHS)) {
    const original = (workspace as Record<string, unknown>)[name];
    if (typeof original !== 'function' || Object.hasOwn(SELF_AUDITED, name)) continue;
    const audited = method(name);
    const compound = COMPOUND.has(name);
    Object.defineProperty(workspace, name, {
      configurable: true,
      writable: true,
      value(this: unknown, ...args: unknown[]): Promise<unknown> {
        if (log.inCompound(workspace)) return (original as Method).apply(this, args);
        if (!compound) return log.record(audited, args, original as Method, this);
        return log.record(audited, args, () => log.compound(workspace, () => (original as Method).apply(this, args)));
      },
    });
  }
}

/**
 * Gives a workspace its audit log when `sinks` holds any (validated: an array of functions); returns how
 * its self-audited methods record themselves.
 */
export function auditWorkspace(workspace: object, sinks: unknown): SelfAudit {
  const log = new AuditLog(sinks);
  if (!log.active) return NOT_AUDITED;
  auditMethods(workspace, log);
  flushWhenDisposed(workspace, log);
  registerAuditLog(workspace, log);
  return log;
}

/** Has `dispose()` resolve (or reject) only once the workspace's sinks hold every event it recorded. */
function flushWhenDisposed(workspace: object, log: AuditLog): void {
  const dispose = (workspace as { dispose?: unknown }).dispose;
  if (typeof dispose !== 'function') return;
  Object.defineProperty(workspace, 'dispose', {
    configurable: true,
    writable: true,
    async value(this: unknown, ...args: unknown[]): Promise<void> {
      try {
        await (dispose as Method).apply(this, args);
      } finally {
        log.flush();
      }
    },
  });
}
