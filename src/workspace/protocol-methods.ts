import type { SnapshotableWorkspace } from './types.js';

/** The names of `W`'s methods, optional ones included (symbol-keyed ones aside). */
export type MethodsOf<W> = {
  [K in keyof W]-?: K extends string ? (NonNullable<W[K]> extends (...args: never[]) => unknown ? K : never) : never;
}[keyof W];

/** Every method of the protocol by name (`[Symbol.asyncDispose]`, which only calls `dispose`, aside). */
export type ProtocolMethod = MethodsOf<SnapshotableWorkspace>;

/**
 * What a protocol method does, as the layers that treat methods alike need to know it:
 * - `read`: changes nothing (a read-only tool may call it);
 * - `change`: changes the workspace's files (a session's history records it, a journal plans it);
 * - `snapshot`: changes no file, but is no plain read either (a read-only tool may not take snapshots);
 * - `lifetime`: `seal` and `dispose`, which only the workspace's owner calls.
 */
export type ProtocolMethodKind = 'read' | 'change' | 'snapshot' | 'lifetime';

export interface ProtocolMethodTraits {
  readonly kind: ProtocolMethodKind;
  /** What a call gives back: a promise, an async iterator (`watch`) or nothing (`seal`). */
  readonly returns: 'promise' | 'iterator' | 'nothing';
  /** Whether its first two arguments are two paths, from and to (rename, copy). */
  readonly twoPaths: boolean;
  /** Whether it is built from the workspace's other protocol calls (the audit records it once, not per inner call). */
  readonly compound: boolean;
  /** Whether a workspace may lack it. */
  readonly optional: boolean;
}

const method = (kind: ProtocolMethodKind, traits: Partial<Omit<ProtocolMethodTraits, 'kind'>> = {}): ProtocolMethodTraits =>
  Object.freeze({ kind, returns: 'promise', twoPaths: false, compound: false, optional: false, ...traits });

/**
 * The protocol's methods, once: every list of methods in the layers above is data over this table. Keyed by
 * {@link ProtocolMethod}, so a method added to the `Workspace` type does not compile until it is listed here.
 */
export const PROTOCOL_METHODS: Readonly<Record<ProtocolMethod, ProtocolMethodTraits>> = Object.freeze({
  read: method('read'),
  readBytes: method('read'),
  write: method('change'),
  writeBytes: method('change'),
  createReadStream: method('read'),
  createWriteStream: method('change'),
  exists: method('read'),
  stat: method('read'),
  list: method('read'),
  glob: method('read'),
  grep: method('read'),
  mkdir: method('change'),
  delete: method('change'),
  rename: method('change', { twoPaths: true }),
  copy: method('change', { twoPaths: true }),
  snapshot: method('snapshot'),
  restore: method('change'),
  diff: method('read'),
  patch: method('read', { compound: true }),
  snapshotTree: method('read'),
  writeFiles: method('change', { compound: true, optional: true }),
  setExecutable: method('change'),
  symlink: method('change'),
  readlink: method('read'),
  watch: method('read', { returns: 'iterator' }),
  seal: method('lifetime', { returns: 'nothing' }),
  dispose: method('lifetime'),
} satisfies Record<ProtocolMethod, ProtocolMethodTraits>);

/** The protocol's method names, in the table's order. */
export const PROTOCOL_METHOD_NAMES = Object.freeze(Object.keys(PROTOCOL_METHODS) as ProtocolMethod[]);

/** The names of the methods whose traits pass `test`, in the table's order. */
export function protocolMethods(test: (traits: ProtocolMethodTraits) => boolean): readonly ProtocolMethod[] {
  return Object.freeze(PROTOCOL_METHOD_NAMES.filter((name) => test(PROTOCOL_METHODS[name])));
}
