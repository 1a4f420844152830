import { tool, type FunctionTool } from '@openai/agents';
import type { Session } from '../session/types.js';
import { adapterTools, resultText, runNamedTool, type AdapterOptions } from './shared.js';

/** A strict JSON Schema as `tool()` takes it (the SDK does not export the type by name). */
type StrictJsonSchema = { type: 'object'; properties: Record<string, never>; required: never[]; additionalProperties: false };
/** One of the tools: a function tool whose output is the result's text. */
export type SessionFunctionTool = FunctionTool<unknown, StrictJsonSchema, string>;

/**
 * sessionfs tools as function tools of the OpenAI Agents SDK (@openai/agents):
 * `new Agent({ name, instructions, tools: openaiAgentsTools(session) })`. Strict mode, with each tool's
 * `strictJsonSchema`: the SDK passes the model's arguments through unvalidated, and `session.runTool`
 * checks them (a `null` optional argument is absent). A failure is rolled back and returned as the tool
 * output, starting `Error [CODE]:`, which the model reads (function call outputs have no error flag).
 */
export function openaiAgentsTools(session: Session, options: AdapterOptions = {}): SessionFunctionTool[] {
  const tools = adapterTools(options);
  return tools.map((definition) =>
    tool({
      name: definition.name,
      description: definition.description,
      parameters: definition.strictJsonSchema as StrictJsonSchema,
      strict: true,
      execute: async (input, _context, details) => resultText(await runNamedTool(session, tools, definition.name, input, details?.signal)),
    }),
  );
}
