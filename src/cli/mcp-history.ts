import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { HistoryOperation, HistoryTurn } from '../history/types.js';
import type { Session } from '../session/types.js';
import { failureFromError } from '../tools/failure.js';
import type { DirectTool } from './mcp-review.js';

/** Turns the `history` tool shows by default, newest. */
const DEFAULT_TURNS = 20;

const historyArgs = z.strictObject({ turns: z.number().int().min(1).max(1000).optional() });
const noArgs = z.strictObject({});

/**
 * `history`, `undo` and `redo` (`sessionfs mcp --history-tools`): the session's turns, and moving by one
 * turn. They run outside `runTool` (an undo is not a call to roll back, and could not run inside one); each
 * undo and redo is recorded in the history with the model as its actor. `readOnly`: only `history`.
 */
export function historyTools(session: () => Promise<Session>, redact: (text: string) => string, readOnly: boolean): DirectTool[] {
  const answer = (text: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text: redact(text) }], isError });
  const failed = (name: string, error: unknown): CallToolResult => answer(failureFromError(name, error).message, true);
  const refused = (name: string, issues: z.ZodError): CallToolResult =>
    answer(`Error [EINVAL]: invalid parameters for ${name}: ${issues.issues[0]?.message ?? 'invalid arguments'}`, true);

  const history: DirectTool = {
    name: 'history',
    description: `The session's history: its turns (one per response of yours, or per call when the client does not group them), newest last, each with its calls and what they changed (A added, M modified, D deleted). Undone turns are marked. Shows the newest ${DEFAULT_TURNS} turns unless turns says otherwise.`,
    jsonSchema: {
      type: 'object',
      properties: {
        turns: {
          type: 'integer',
          minimum: 1,
          maximum: 1000,
          description: `How many of the newest turns to show (default ${DEFAULT_TURNS}).`,
        },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async call(args) {
      const parsed = historyArgs.safeParse(args ?? {});
      if (!parsed.success) return refused('history', parsed.error);
      try {
        const view = await (await session()).history();
        const shown = view.turns.slice(-(parsed.data.turns ?? DEFAULT_TURNS));
        const hidden = view.turns.length - shown.length;
        const lines = [
          ...(hidden > 0 ? [`(${hidden} older turn(s) not shown)`] : []),
          ...shown.map(describeTurn),
          `can undo: ${view.canUndo ? 'yes' : 'no'}; can redo: ${view.canRedo ? 'yes' : 'no'}`,
        ];
        return answer(view.turns.length === 0 ? 'No operations yet.' : lines.join('\n'));
      } catch (error) {
        return failed('history', error);
      }
    },
  };

  const move = (name: 'undo' | 'redo', description: string): DirectTool => ({
    name,
    description,
    jsonSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async call(args) {
      const parsed = noArgs.safeParse(args ?? {});
      if (!parsed.success) return refused(name, parsed.error);
      try {
        const opened = await session();
        const done = name === 'undo' ? await opened.undo({ actor: 'model' }) : await opened.redo({ actor: 'model' });
        return answer(`${name === 'undo' ? 'Undid' : 'Redid'} ${done.target ?? 'the turn'}. ${describeChanges(done)}`);
      } catch (error) {
        return failed(name, error);
      }
    },
  });

  return [
    history,
    ...(readOnly
      ? []
      : [
          move(
            'undo',
            'Undo your last turn that changed files (what one of your responses did): the workspace goes back to how it was before it. Nothing is lost: redo brings it back, until you change something else.',
          ),
          move('redo', 'Redo the turn the last undo undid. Not possible once something changed after the undo.'),
        ]),
  ];
}

function describeTurn(turn: HistoryTurn): string {
  const head = `${turn.id}${turn.label === undefined ? '' : ` (${turn.label})`}${turn.kind === 'turn' ? '' : ` [${turn.kind}]`}${turn.undone ? ' [undone]' : ''}`;
  return [head, ...turn.operations.map((operation) => `  ${describeOperation(operation)}`)].join('\n');
}

function describeOperation(operation: HistoryOperation): string {
  const outcome = operation.outcome === 'failed' ? ` failed${operation.code === undefined ? '' : ` (${operation.code})`}` : '';
  return `${operation.id} ${operation.actor} ${operation.tool} ${operation.summary}${outcome}${operation.changed.length === 0 ? '' : ` → ${describeChanges(operation)}`}`.trim();
}

function describeChanges(operation: HistoryOperation): string {
  if (operation.changed.length === 0) return 'Nothing changed.';
  const letter = { added: 'A', modified: 'M', deleted: 'D' } as const;
  const shown = operation.changed.slice(0, 20).map((entry) => `${letter[entry.status]} ${entry.path}`);
  const more = operation.changed.length - shown.length;
  return shown.join(', ') + (more > 0 ? `, … ${more} more` : '');
}
