import { jsonSchema, tool, type ToolSet } from 'ai';
import type { JSONSchema7 } from 'ai';
import type { Session } from '../session/types.js';
import { adapterTools, runNamedTool, ToolCallFailedError, type AdapterOptions } from './shared.js';

/**
 * sessionfs tools as a Vercel AI SDK `ToolSet` (ai 6, the newest major that runs on Node 20), for `generateText` / `streamText`:
 * `generateText({ model, tools: aiSdkTools(session), … })`. Every call goes through `session.runTool` (with
 * the SDK's abort signal). A failed call is rolled back and thrown as a `ToolCallFailedError`, which the SDK
 * turns into a `tool-error` part the model reads (its text starts `Error [CODE]:`). Each step's calls are one
 * turn of `session.history()`.
 */
export function aiSdkTools(session: Session, options: AdapterOptions = {}): ToolSet {
  const tools = adapterTools(options);
  const set: ToolSet = {};
  // The SDK hands every call of one step (one model response) the same messages: a new array, a new turn.
  let step: unknown;
  for (const definition of tools) {
    set[definition.name] = tool({
      description: definition.description,
      inputSchema: jsonSchema<unknown>(definition.jsonSchema as JSONSchema7),
      execute: async (input: unknown, { abortSignal, messages }) => {
        if (messages !== step) {
          step = messages;
          // Not awaited: queued now, so the calls of the step still run in the order the model gave them
          // (a failure to open it, a disposed session, is the call's to report).
          session.turn().catch(() => undefined);
        }
        const result = await runNamedTool(session, tools, definition.name, input, abortSignal);
        if (!result.success) throw new ToolCallFailedError(definition.name, result);
        return result.message;
      },
    });
  }
  return set;
}
export { ToolCallFailedError } from './shared.js';
