import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { auditLogOf, auditScope } from '../governance/audit.js';
import { isWorkspaceError, WORKSPACE_ERROR_CODES, type WorkspaceErrorCode } from '../workspace/errors.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { prepareArguments } from './arguments.js';
import { unguardedWorkspace } from './forwarding-view.js';
import { guardWorkspace } from './call-view.js';
import { UndoJournal } from './undo-journal.js';
import type { Session, ToolCallRecord, ToolCallResult, ToolContext, ToolDefinition, ToolResult } from './types.js';

/** The codes a tool result may carry: a workspace error's (`ABORT_ERR` for an abort) and `ETOOL`. */
const KNOWN_CODES = new Set<string>([...WORKSPACE_ERROR_CODES, 'ETOOL']);

/**
 * Which session a piece of async code runs inside a tool call of, and that call's view of the workspace: to
 * refuse re-entrant calls that would deadlock, and so that `session.filesystem` read by a handler is its
 * call-scoped view too (the raw workspace let writes land after an abort's rollback, or after the call).
 */
export const callScope = new AsyncLocalStorage<{ session: Session; view: SnapshotableWorkspace }>();

/** What one call needs from its session. */
export interface CallHost {
  readonly session: Session;
  readonly workspace: SnapshotableWorkspace;
  /** Removes host paths from a message; `allAbsolute` also any absolute path (for errors not our own). */
  scrub(message: string, allAbsolute: boolean): string;
  /** The snapshot taken before the call, as soon as it exists (a handler may look for it in `session.snapshots`). */
  addSnapshot(snapshot: WorkspaceSnapshot): void;
  /** How a failed call is undone: a snapshot before it, or an undo journal of what it changes. */
  rollback: 'snapshot' | 'journal';
  /** Resolves once the workspace may change (a given host root's baseline is taken); a changing call waits. */
  ready?: () => Promise<void>;
}

type Outcome = { kind: 'result'; value: unknown } | { kind: 'error'; error: unknown } | { kind: 'aborted' };

/**
 * One tool call, under its own id: everything it does to an audited workspace (its snapshot, its handler's
 * operations, its rollback) is recorded with the tool as the actor, then the call itself as `toolCall`.
 */
export async function runToolCall(host: CallHost, tool: ToolDefinition, rawParams: unknown, signal?: AbortSignal): Promise<ToolCallRecord> {
  const callId = randomUUID();
  const log = auditLogOf(unguardedWorkspace(host.workspace));
  if (log === undefined) return runCall(host, tool, rawParams, signal, callId);
  const actor = { kind: 'tool', tool: tool.name, callId } as const;
  const started = performance.now();
  const entry = await auditScope.run({ sessionId: host.session.id, actor }, () => runCall(host, tool, rawParams, signal, callId));
  const outcome = entry.result.success ? 'ok' : (entry.result.code ?? 'ETOOL');
  log.emit({ at: entry.startedAt, sessionId: host.session.id, actor, op: 'toolCall', outcome, durationMs: performance.now() - started });
  return entry;
}

/**
 * Validate the parameters (nothing touched when invalid), snapshot, run the handler on a call-scoped view,
 * and on a thrown error, `success: false` or an abort restore the snapshot.
 */
async function runCall(
  host: CallHost,
  tool: ToolDefinition,
  rawParams: unknown,
  signal: AbortSignal | undefined,
  callId: string,
): Promise<ToolCallRecord> {
  const workspace = host.workspace;
  const startedAt = new Date().toISOString();
  const errorMessage = (error: unknown): string =>
    isWorkspaceError(error) ? host.scrub(error.message, false) : host.scrub(error instanceof Error ? error.message : String(error), true);
  const record = (params: unknown, snapshot: WorkspaceSnapshot | undefined, result: ToolCallResult): ToolCallRecord => {
    const entry: ToolCallRecord = { tool: tool.name, callId, params, result, startedAt, finishedAt: new Date().toISOString() };
    if (snapshot !== undefined) entry.snapshot = snapshot;
    return entry;
  };
  const notStarted = `${tool.name} was aborted before it started; nothing was changed`;

  if (signal?.aborted) return record(rawParams, undefined, failed('ABORT_ERR', notStarted));

  const prepared = prepareArguments(tool.parameters, rawParams);
  if (!prepared.ok)
    return record(rawParams, undefined, failed('EINVAL', host.scrub(`invalid parameters for ${tool.name}: ${prepared.message}`, false)));
  let parsed: Awaited<ReturnType<typeof tool.parameters.safeParseAsync>>;
  try {
    const checked = validate(tool.parameters, prepared.params);
    parsed = checked instanceof Promise ? await checked : checked;
  } catch (error) {
    // A refinement that throws instead of reporting an issue.
    return record(rawParams, undefined, failed('EINVAL', `invalid parameters for ${tool.name}: ${errorMessage(error)}`));
  }
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.length === 0 ? 'parameters' : issue.path.join('.')}: ${issue.message}`)
      .join('; ');
    return record(rawParams, undefined, failed('EINVAL', host.scrub(`invalid parameters for ${tool.name}: ${issues}`, false)));
  }
  const params: unknown = parsed.data;

  // A read-only tool changes nothing, so there is nothing to roll back: no snapshot (the cost of every call on
  // the host backend). Its view refuses every method but reads, so the annotation cannot lie.
  const readOnlyTool = tool.annotations?.readOnlyHint === true;
  const changing = !workspace.readOnly && !readOnlyTool;
  if (changing && host.ready !== undefined) {
    try {
      await host.ready();
    } catch (error) {
      return record(
        params,
        undefined,
        failed('ESNAPSHOT', `${tool.name} was not run: the snapshot of the workspace's starting state failed (${errorMessage(error)})`),
      );
    }
  }
  // The journal sees only what goes through the call's view: a tool that reaches beyond it (`openWorldHint`,
  // as the host shell running programs in the root) gets a snapshot. So does a workspace whose policy has
  // `confirm`, which would be asked again for the journal's own undo writes.
  const journal =
    changing &&
    host.rollback === 'journal' &&
    tool.annotations?.openWorldHint !== true &&
    (workspace as { policy?: { confirm?: unknown } }).policy?.confirm === undefined
      ? new UndoJournal(workspace, `before ${tool.name}`)
      : undefined;
  let snapshot: WorkspaceSnapshot | undefined;
  if (changing && journal === undefined) {
    try {
      snapshot = await workspace.snapshot({ tag: `before ${tool.name}` });
    } catch (error) {
      return record(
        params,
        undefined,
        failed('ESNAPSHOT', `${tool.name} was not run: the snapshot before it failed (${errorMessage(error)})`),
      );
    }
    host.addSnapshot(snapshot);
  }
  // Aborted while the snapshot was taken: the handler must not start (its effects may reach beyond the workspace).
  if (signal?.aborted) return record(params, snapshot, failed('ABORT_ERR', notStarted));

  const guard = guardWorkspace(workspace, tool.name, { readOnly: readOnlyTool, ...(journal === undefined ? {} : { journal }) });
  const context: ToolContext = { filesystem: guard.workspace, session: host.session };
  if (signal !== undefined) context.signal = signal;
  const outcome = await runHandler(host.session, tool, params, context, signal);
  guard.revoke();
  // After an abort the handler may still be running: wait for the operations it started, so none lands after the restore.
  await guard.idle();
  if (journal?.snapshot !== undefined) {
    snapshot = journal.snapshot;
    host.addSnapshot(snapshot);
  }

  let failure: ToolCallResult | undefined;
  try {
    failure = failureOf(host, tool, outcome, signal, errorMessage);
    if (failure === undefined) {
      const value = (outcome as { kind: 'result'; value: ToolResult }).value;
      return record(params, snapshot, { ...value, message: host.scrub(value.message, false), rolledBack: false });
    }
  } catch {
    // A result whose getters throw: the call failed, and is rolled back like any other (it escaped the rollback).
    failure = failed('ETOOL', `${tool.name} returned an invalid result (expected { success, message, value? })`);
  }
  if (journal === undefined && snapshot === undefined) return record(params, snapshot, failure);
  try {
    if (journal === undefined) await workspace.restore(snapshot as WorkspaceSnapshot);
    else await journal.rollback();
  } catch (error) {
    const message = `${failure.message} (rolling back failed too: ${errorMessage(error)})`;
    return record(params, snapshot, { ...failure, message, rolledBack: false, code: 'ESNAPSHOT' });
  }
  return record(params, snapshot, { ...failure, rolledBack: true });
}

/**
 * The parameters checked by the tool's schema: synchronously (most schemas, and every one of the suite's;
 * an awaited parse cost every call a promise), asynchronously when the synchronous parse throws. That is an
 * async refinement (zod's `$ZodAsyncError`, not told apart by class: the schema may come from another copy
 * of zod) or a refinement that throws, which the async parse throws again. The checks before an async
 * refinement run twice.
 */
function validate(schema: z.ZodType, params: unknown): ReturnType<z.ZodType['safeParse']> | ReturnType<z.ZodType['safeParseAsync']> {
  try {
    return schema.safeParse(params);
  } catch {
    return schema.safeParseAsync(params);
  }
}

async function runHandler(
  session: Session,
  tool: ToolDefinition,
  params: unknown,
  context: ToolContext,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  const settled = callScope
    .run({ session, view: context.filesystem }, async () => tool.handler(params as z.output<z.ZodType>, context))
    .then(
      (value): Outcome => ({ kind: 'result', value }),
      (error: unknown): Outcome => ({ kind: 'error', error }),
    );
  if (signal === undefined) return settled;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<Outcome>((resolveAbort) => {
    onAbort = () => resolveAbort({ kind: 'aborted' });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([settled, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

/** The failed result for an outcome, or `undefined` when the call succeeded. */
function failureOf(
  host: CallHost,
  tool: ToolDefinition,
  outcome: Outcome,
  signal: AbortSignal | undefined,
  errorMessage: (error: unknown) => string,
): ToolCallResult | undefined {
  const abortedMessage = `${tool.name} was aborted; its changes were rolled back`;
  if (outcome.kind === 'aborted') return failed('ABORT_ERR', abortedMessage);
  if (outcome.kind === 'error') {
    if (signal?.aborted) return failed('ABORT_ERR', abortedMessage);
    const error = outcome.error;
    if (isWorkspaceError(error)) return failed(error.code, host.scrub(error.message, false));
    return failed('ETOOL', `${tool.name} failed: ${errorMessage(error)}`);
  }
  const value = outcome.value as Partial<ToolResult> | null | undefined;
  if (typeof value !== 'object' || value === null || typeof value.success !== 'boolean' || typeof value.message !== 'string') {
    return failed('ETOOL', `${tool.name} returned an invalid result (expected { success, message, value? })`);
  }
  if (value.success) return undefined;
  const code = signal?.aborted ? 'ABORT_ERR' : codeOf(value.value);
  const result: ToolCallResult = { success: false, message: host.scrub(value.message, false), rolledBack: false, code };
  if (value.value !== undefined) result.value = value.value;
  return result;
}

function failed(code: WorkspaceErrorCode | 'ETOOL', message: string): ToolCallResult {
  return { success: false, message, rolledBack: false, code };
}

/** A failed handler result's code: its `value.code` when it carries a known one (as the tool suite's do), else `ETOOL`. */
function codeOf(value: unknown): ToolCallResult['code'] {
  const code = typeof value === 'object' && value !== null ? (value as { code?: unknown }).code : undefined;
  // Handlers written before aborts had a protocol code reported `EABORT`.
  if (code === 'EABORT') return 'ABORT_ERR';
  return typeof code === 'string' && KNOWN_CODES.has(code) ? (code as ToolCallResult['code']) : 'ETOOL';
}
