import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, EmbeddedResource } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ExportResult } from '../export/export-plan.js';
import type { WriteBackOptions } from '../export/write-back.js';
import type { PolicyOperation } from '../governance/policy.js';
import { defineTool } from '../session/define-tool.js';
import type { Tool, ToolResult } from '../session/types.js';
import { failureFromError } from '../tools/failure.js';
import type { WorkspaceSnapshot } from '../workspace/types.js';

/** How much of a patch the `diff` tool shows before it says what it left out. */
export const DIFF_CAP_BYTES = 64 * 1024;

/** What the user answered when asked through MCP elicitation, or that the client cannot be asked. */
export type UserAnswer = 'accept' | 'decline' | 'cancel' | 'unsupported';

/**
 * Asks the user a yes/no question through MCP elicitation (a form with one `confirm` checkbox). `accept`
 * only when the user accepted the form and ticked it; `unsupported` when the client did not declare the
 * `elicitation` capability (nothing is sent).
 */
export async function askUser(server: Server, message: string, signal?: AbortSignal): Promise<UserAnswer> {
  if (server.getClientCapabilities()?.elicitation?.form === undefined) return 'unsupported';
  const answer = await server.elicitInput(
    {
      mode: 'form',
      message,
      requestedSchema: {
        type: 'object',
        properties: { confirm: { type: 'boolean', title: 'Go ahead', description: message, default: false } },
        required: ['confirm'],
      },
    },
    signal === undefined ? undefined : { signal },
  );
  if (answer.action !== 'accept') return answer.action;
  return answer.content?.confirm === true ? 'accept' : 'decline';
}

/**
 * A `confirm` policy that asks the user through MCP elicitation, for `createSession({ policy: { confirm } })`
 * when the session is served over MCP: `attach(server)` once the server exists. Until then, and with a
 * client that cannot be asked, every operation it is asked about is denied.
 */
export function userConfirmation(): { confirm: (operation: PolicyOperation) => Promise<boolean>; attach(server: Server): void } {
  let attached: Server | undefined;
  return {
    attach(server) {
      attached = server;
    },
    async confirm(operation) {
      if (attached === undefined) return false;
      const what =
        operation.op === 'delete'
          ? `Delete ${operation.path}?`
          : `${capitalised(operation.op)} ${operation.path}${operation.to === undefined ? '' : ` onto ${operation.to}`}?`;
      return (await askUser(attached, `The agent asks: ${what}`)) === 'accept';
    },
  };
}

const capitalised = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** A patch cut at the last file (or line) boundary within the cap, and a note saying what was left out. */
export function capPatch(patch: string, cap = DIFF_CAP_BYTES): { text: string; truncated: boolean } {
  const bytes = Buffer.byteLength(patch);
  if (bytes <= cap) return { text: patch, truncated: false };
  let cut = Buffer.from(patch)
    .subarray(0, cap)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  const fileBoundary = cut.lastIndexOf('\ndiff --git ');
  cut = fileBoundary > 0 ? cut.slice(0, fileBoundary + 1) : cut.slice(0, cut.lastIndexOf('\n') + 1);
  const shownFiles = cut.split('\ndiff --git ').length - (cut.startsWith('diff --git ') ? 0 : 1);
  const allFiles = patch.split('\ndiff --git ').length - (patch.startsWith('diff --git ') ? 0 : 1);
  const note = `[diff truncated: ${Buffer.byteLength(cut)} of ${bytes} bytes shown, ${allFiles - shownFiles} more file(s) left out; call export_patch for the whole patch]\n`;
  return { text: cut + note, truncated: true };
}

interface ReviewToolsOptions {
  initial: string;
  lookup(id: string): Promise<WorkspaceSnapshot>;
}

/** `diff` (names and unified hunks, capped) and `export_patch` (the whole patch, as an embedded resource). */
export function reviewTools({ initial, lookup }: ReviewToolsOptions): Tool[] {
  const diffTool = defineTool({
    name: 'diff',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    description: `Show what changed between two snapshots, or between a snapshot and now: the files added (A), modified (M) and deleted (D), then their unified diff (cut at ${DIFF_CAP_BYTES / 1024} KiB with a note; export_patch gives all of it). from defaults to "${initial}"; to defaults to the current state.`,
    parameters: z.object({
      from: z.string().min(1).optional().describe(`Snapshot id to compare from (default "${initial}").`),
      to: z.string().min(1).optional().describe('Snapshot id to compare to (default: the current state).'),
    }),
    handler: async ({ from, to }, { filesystem }): Promise<ToolResult> => {
      try {
        const fromId = from ?? initial;
        const [before, after] = [await lookup(fromId), to === undefined ? undefined : await lookup(to)];
        const entries = await filesystem.diff(before, after);
        const against = to === undefined ? 'now' : to;
        if (entries.length === 0) return { success: true, message: `No changes between ${fromId} and ${against}.`, value: { changes: [] } };
        const lines = entries.map((e) => `${e.status === 'added' ? 'A' : e.status === 'deleted' ? 'D' : 'M'} ${e.path}`);
        const { text, truncated } = capPatch(await filesystem.patch(before, after));
        return {
          success: true,
          message: `${entries.length} changed between ${fromId} and ${against} (A added, M modified, D deleted):\n${lines.join('\n')}\n\n${text}`,
          value: { changes: entries, truncated },
        };
      } catch (error) {
        return failureFromError('diff', error, filesystem);
      }
    },
  });

  const exportPatchTool = defineTool({
    name: 'export_patch',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    description: `Hand the user the git patch (git apply --binary) of everything changed since a snapshot (default "${initial}", the session's start), as an attached file.`,
    parameters: z.object({ from: z.string().min(1).optional().describe(`Snapshot id to start from (default "${initial}").`) }),
    handler: async ({ from }, { filesystem }): Promise<ToolResult> => {
      try {
        const fromId = from ?? initial;
        const patch = await filesystem.patch(await lookup(fromId));
        const files = patch === '' ? 0 : patch.split('\ndiff --git ').length;
        return {
          success: true,
          message:
            patch === ''
              ? `No changes since ${fromId}: the patch is empty.`
              : `The patch since ${fromId} (${files} file(s), ${Buffer.byteLength(patch)} bytes) is attached.`,
          value: { patch: { from: fromId, text: patch } },
        };
      } catch (error) {
        return failureFromError('export_patch', error, filesystem);
      }
    },
  });
  return [diffTool, exportPatchTool];
}

/** `export_patch`'s patch as an MCP embedded resource (text/x-diff), for the user and the model. */
export function patchResource(toolName: string, value: unknown): EmbeddedResource | undefined {
  if (toolName !== 'export_patch' || value === null || typeof value !== 'object' || !('patch' in value)) return undefined;
  const { from, text } = (value as { patch: { from: string; text: string } }).patch;
  return {
    type: 'resource',
    resource: { uri: `sessionfs://patches/${encodeURIComponent(from)}..now.patch`, mimeType: 'text/x-diff', text },
    annotations: { audience: ['user', 'assistant'] },
  };
}

/** A tool the server runs itself, outside `runTool`: it changes the host, not the workspace. */
export interface DirectTool {
  name: string;
  description: string;
  jsonSchema: Record<string, unknown>;
  annotations: Tool['annotations'];
  call(args: unknown, signal: AbortSignal): Promise<CallToolResult>;
}

interface WriteBackToolOptions {
  server: Server;
  writeBack(options: WriteBackOptions): Promise<ExportResult>;
  /** `--allow-write-back`: apply without asking when the client cannot be asked. */
  allowWithoutAsking: boolean;
  redact(text: string): string;
}

const writeBackArgs = z.strictObject({ dry_run: z.boolean().optional() });

/**
 * `write_back`: with `dry_run`, the plan (what would be written and deleted, and the conflicts: host files
 * changed since hydration). Otherwise the plan is shown to the user through MCP elicitation and applied only
 * when they accept; a client that cannot be asked gets it applied only when the server was started with
 * `--allow-write-back`. Conflicts are never overwritten (`onConflict: 'skip'`).
 */
export function writeBackTool(options: WriteBackToolOptions): DirectTool {
  const text = (message: string, isError = false): CallToolResult => ({
    content: [{ type: 'text', text: options.redact(message) }],
    isError,
  });
  return {
    name: 'write_back',
    description:
      'Write the workspace changes back to the host folders it was hydrated from. dry_run: true lists what would be written, deleted and left alone as a conflict (a host file changed since the session started). A real run asks the user to confirm first; conflicts are never overwritten.',
    jsonSchema: {
      type: 'object',
      properties: { dry_run: { type: 'boolean', description: 'Only plan: change nothing.' } },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async call(args, signal) {
      const parsed = writeBackArgs.safeParse(args ?? {});
      if (!parsed.success)
        return text(
          `Error [EINVAL]: write_back takes { dry_run?: boolean }: ${parsed.error.issues[0]?.message ?? 'invalid arguments'}`,
          true,
        );
      try {
        const plan = await options.writeBack({ dryRun: true, onConflict: 'skip', signal });
        if (parsed.data.dry_run === true) return text(`Write-back plan (nothing written):\n${describePlan(plan)}`);
        if (plan.written.length === 0 && plan.deleted.length === 0) return text(`Nothing to write back.\n${describePlan(plan)}`);
        const answer = await askUser(options.server, `Write the agent's changes back to your folders?\n${describePlan(plan)}`, signal);
        if (answer === 'unsupported' && !options.allowWithoutAsking)
          return text(
            'Error [EPERM]: write_back needs the user to confirm, and this client cannot ask them (no MCP elicitation); the server was not started with --allow-write-back. Nothing was written.',
            true,
          );
        if (answer === 'decline' || answer === 'cancel')
          return text(
            `Error [EPERM]: the user ${answer === 'decline' ? 'declined' : 'cancelled'} the write-back. Nothing was written.`,
            true,
          );
        const done = await options.writeBack({ onConflict: 'skip', signal });
        return text(`Wrote back:\n${describePlan(done)}`);
      } catch (error) {
        return text(failureFromError('write_back', error).message, true);
      }
    },
  };
}

function describePlan(result: ExportResult): string {
  const list = (label: string, paths: readonly string[]): string =>
    paths.length === 0
      ? ''
      : `${label} (${paths.length}):\n${paths
          .slice(0, 50)
          .map((path) => `  ${path}`)
          .join('\n')}${paths.length > 50 ? `\n  … ${paths.length - 50} more` : ''}\n`;
  const conflicts = result.conflicts.map((conflict) => `${conflict.path} (${conflict.reason})`);
  const skipped = (result.skipped ?? []).map((entry) => `${entry.path} (${entry.reason})`);
  const text =
    list('write', result.written) +
    list('delete', result.deleted) +
    list('conflicts, left as they are on the host', conflicts) +
    list('protected, left alone', skipped);
  return text === '' ? 'no changes\n' : text;
}
