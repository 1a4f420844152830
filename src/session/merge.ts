import { z } from 'zod';
import { mergeBase } from '../history/lineage.js';
import { mergeInto, type MergeConflictMode, type MergeOptions, type MergeResult } from '../history/merge.js';
import { InvalidArgumentError, isWorkspaceError } from '../workspace/errors.js';
import type { SnapshotableWorkspace, SnapshotTree, WorkspaceSnapshot } from '../workspace/types.js';
import { defineTool } from './define-tool.js';
import type { MergeSource, Session, ToolResult } from './types.js';

const OPTION_NAMES: readonly string[] = ['base', 'conflicts'];

/** The other side as the merge reads it: its tree now, and the base (opened here, or a snapshot of ours). */
interface PreparedMerge {
  name: string;
  theirs: SnapshotTree;
  base: SnapshotTree | WorkspaceSnapshot;
}

function isSession(source: MergeSource): source is Session {
  return typeof (source as Session).runTool === 'function' && typeof (source as Session).id === 'string';
}

function workspaceOf(source: MergeSource): SnapshotableWorkspace {
  return isSession(source) ? source.filesystem : source;
}

function checkOptions(options: unknown): MergeOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('merge options must be an object');
  const unknown = Object.keys(options).filter((key) => !OPTION_NAMES.includes(key));
  if (unknown.length > 0) throw new InvalidArgumentError(`merge does not take ${unknown.join(', ')} (options: ${OPTION_NAMES.join(', ')})`);
  const { conflicts } = options as MergeOptions;
  if (conflicts !== undefined && conflicts !== 'report' && conflicts !== 'markers')
    throw new InvalidArgumentError(`conflicts must be 'report' or 'markers', got ${JSON.stringify(conflicts)}`);
  return options as MergeOptions;
}

/**
 * Reads the other side (its live tree, and the base when the other side holds it): outside this session's
 * queue when called from `session.merge`, so two sessions merging each other do not wait for each other.
 */
async function prepare(ours: Session, other: MergeSource, options: MergeOptions): Promise<PreparedMerge> {
  const source = other as unknown;
  if (typeof source !== 'object' || source === null || (!isSession(other) && typeof other.snapshotTree !== 'function'))
    throw new InvalidArgumentError('merge takes a session or a workspace to merge from');
  if (other === ours || (isSession(other) && other.id === ours.id)) throw new InvalidArgumentError('a session cannot merge itself');
  const name = isSession(other) ? other.id : 'workspace';
  const workspace = workspaceOf(other);
  const theirs = await workspace.snapshotTree();
  if (options.base !== undefined) {
    // The base may be either side's snapshot: the other side's is opened here, ours inside the call.
    const base = await workspace.snapshotTree(options.base).catch((error: unknown) => {
      if (isWorkspaceError(error)) return undefined;
      throw error;
    });
    return { name, theirs, base: base ?? options.base };
  }
  const found = isSession(other) ? mergeBase(ours, other) : undefined;
  if (found === undefined) {
    throw new InvalidArgumentError(
      isSession(other)
        ? `session ${ours.id} and session ${other.id} were not forked one from the other (nor from one session): pass { base }`
        : 'merging a workspace needs { base }: the snapshot both descend from',
    );
  }
  const base = found.holder === 'theirs' ? await workspace.snapshotTree(found.point.snapshot) : found.point.snapshot;
  return { name, theirs, base };
}

async function run(view: SnapshotableWorkspace, prepared: PreparedMerge, conflicts: MergeConflictMode | undefined): Promise<MergeResult> {
  let base = prepared.base as SnapshotTree;
  if (typeof base.entry !== 'function') {
    base = await view.snapshotTree(prepared.base as WorkspaceSnapshot).catch((error: unknown) => {
      if (!isWorkspaceError(error)) throw error;
      throw new InvalidArgumentError(`the merge base is a snapshot of neither workspace (${error.message})`);
    });
  }
  return mergeInto(view, prepared.theirs, base, conflicts);
}

/** The tool result a merge gives: a failure (nothing changed) when conflicts were only reported. */
function mergeToolResult(result: MergeResult, name: string): ToolResult<MergeResult> {
  const conflicts = result.conflicts.map((conflict) => `${conflict.path} (${conflict.kind})`).join(', ');
  if (result.conflicts.length > 0 && !result.applied) {
    return {
      success: false,
      message: `merging ${name}: ${result.conflicts.length} conflicts, nothing changed: ${conflicts}`,
      value: result,
    };
  }
  const merged = result.merged.length === 0 ? 'nothing to merge' : `merged ${result.merged.length} paths: ${result.merged.join(', ')}`;
  const marked = result.conflicts.length === 0 ? '' : `; ${result.conflicts.length} conflicts left to resolve: ${conflicts}`;
  return { success: true, message: `merging ${name}: ${merged}${marked}`, value: result };
}

const CALL_PARAMETERS = z.object({ from: z.string(), conflicts: z.enum(['report', 'markers']).optional() });

/**
 * `session.merge(other, options)`: one call on `ours` (its history shows a `merge`; a failure rolls back
 * whatever the merge had written), returning what was merged and the conflicts; a refusal is thrown.
 */
export async function mergeSession(ours: Session, other: MergeSource, rawOptions?: MergeOptions): Promise<MergeResult> {
  const options = checkOptions(rawOptions);
  const prepared = await prepare(ours, other, options);
  let outcome: { result: MergeResult } | { error: unknown } | undefined;
  const tool = defineTool({
    name: 'merge',
    description: 'Merges another session or workspace into this one.',
    parameters: CALL_PARAMETERS,
    handler: async ({ conflicts }, context) => {
      try {
        const result = await run(context.filesystem, prepared, conflicts);
        outcome = { result };
        return mergeToolResult(result, prepared.name);
      } catch (error) {
        outcome = { error };
        throw error;
      }
    },
  });
  const call = await ours.runTool(tool, {
    from: prepared.name,
    ...(options.conflicts === undefined ? {} : { conflicts: options.conflicts }),
  });
  if (outcome !== undefined && 'error' in outcome) throw outcome.error;
  if (outcome === undefined) throw new InvalidArgumentError(call.message);
  return outcome.result;
}

/** Where the `merge` tool finds the sessions it merges from, by the name the model gives. */
export type MergeRegistry = ReadonlyMap<string, MergeSource> | ((name: string) => MergeSource | undefined);

/**
 * The `merge` tool, for an orchestrator running agents in parallel on forks of one session: run on the
 * session that receives the work, it merges the session `from` names in `sessions` (fork-related, so the
 * base is the fork point). Its result lists the merged paths and the conflicts (`value` holds the data);
 * with conflicts nothing changes (`success: false`) unless `conflicts: 'markers'`.
 */
export function mergeTool(options: { sessions: MergeRegistry }) {
  const sessions = options?.sessions;
  if (!(sessions instanceof Map) && typeof sessions !== 'function')
    throw new InvalidArgumentError('mergeTool needs { sessions }: a Map from names to sessions, or a function from a name to a session');
  const lookup = (name: string): MergeSource | undefined => (typeof sessions === 'function' ? sessions(name) : sessions.get(name));
  return defineTool({
    name: 'merge',
    description:
      "Merge another agent's session into this workspace: a three-way, line-wise merge of what both changed since they forked. " +
      "Conflicts are listed and nothing changes, unless conflicts is 'markers' (conflicting files get git-style markers to resolve).",
    parameters: z.object({
      from: z.string().describe('The name of the session to merge from'),
      conflicts: z
        .enum(['report', 'markers'])
        .optional()
        .describe("'report' (default) changes nothing on a conflict; 'markers' writes them"),
    }),
    annotations: { destructiveHint: true },
    handler: async ({ from, conflicts }, context): Promise<ToolResult<MergeResult>> => {
      const other = lookup(from);
      if (other === undefined) {
        const known = sessions instanceof Map ? ` (known: ${[...sessions.keys()].join(', ')})` : '';
        throw new InvalidArgumentError(`no session named ${JSON.stringify(from)} to merge from${known}`);
      }
      const prepared = await prepare(context.session, other, {});
      return mergeToolResult(await run(context.filesystem, { ...prepared, name: from }, conflicts), from);
    },
  });
}
