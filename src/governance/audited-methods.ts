import { PROTOCOL_METHODS, protocolMethods, type ProtocolMethod } from '../workspace/protocol-methods.js';

/** A protocol method as the audit records it: its name, and how its result or input says what it moved. */
export interface AuditedMethod {
  readonly op: string;
  /** Its place among the audited methods (where a log keeps its `AuditMeta` for successes). */
  readonly index: number;
  /** Whether its second argument is a second path (rename, copy): recorded as the event's `to`. */
  readonly to: boolean;
  /** Whether it is built from the workspace's other protocol calls: recorded once, not once per inner call. */
  readonly compound: boolean;
  /** The bytes it moved: from its result, or when it failed (no result) from its second argument (a write's content). */
  readonly bytes: ((result: unknown, second: unknown) => number | undefined) | undefined;
}

/** Every protocol method the audit records: each that returns a promise, but `dispose`. */
type AuditedOp = Exclude<ProtocolMethod, 'watch' | 'seal' | 'dispose'>;
const OPS = protocolMethods((method) => method.returns === 'promise' && method.kind !== 'lifetime') as readonly AuditedOp[];

/**
 * The bytes an operation moved: from its result when it succeeded (no second pass over the content), from
 * its input when it failed (a write's content; a write stream commits with writeBytes, whose staged content
 * has a byteLength too).
 */
const BYTES: Partial<Record<AuditedOp, AuditedMethod['bytes']>> = {
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

/** Each audited method, made once (a log keeps per-method state by `index`). */
export const AUDITED = Object.freeze(
  Object.fromEntries(
    OPS.map((op, index) => {
      const { twoPaths: to, compound } = PROTOCOL_METHODS[op];
      return [op, Object.freeze({ op, index, to, compound, bytes: BYTES[op] })];
    }),
  ),
) as Readonly<Record<AuditedOp, AuditedMethod>>;
