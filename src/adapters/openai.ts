import type { Session } from '../session/types.js';
import { adapterTools, resultText, runNamedTool, type AdapterOptions } from './shared.js';

/** A Chat Completions function tool (`ChatCompletionFunctionTool` in openai@6). */
export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown>; strict: boolean };
}
/** A Responses API function tool (`FunctionTool` in openai@6). */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean;
}

/**
 * What `handleFunctionCalls` reads of a Responses API output item: any item of `response.output` fits (the
 * SDK's `ResponseOutputItem` union, whose members type `call_id`, `name` and `arguments` each their own way).
 */
export interface OpenAIResponseItem {
  readonly type: string;
  readonly call_id?: unknown;
  readonly name?: unknown;
  readonly arguments?: unknown;
}

export interface OpenAIAdapterOptions extends AdapterOptions {
  /** Strict function calling (default true): the tools' `strictJsonSchema`; false: `jsonSchema`. */
  strict?: boolean;
}

/**
 * sessionfs tools for the OpenAI SDK (openai 6, the newest major that runs on Node 20). `chatTools` and `responsesTools` go in the
 * request's `tools`; `handleToolCalls` / `handleFunctionCalls` run what the model called through
 * `session.runTool` and return the messages to send back. A failure is rolled back and comes back as the
 * tool message's content, starting `Error [CODE]:` (OpenAI tool messages have no error flag). Each response's
 * calls are one turn of `session.history()`.
 */
export function openaiTools(session: Session, options: OpenAIAdapterOptions = {}) {
  const tools = adapterTools(options);
  const strict = options.strict ?? true;
  const schema = (tool: (typeof tools)[number]) => (strict ? tool.strictJsonSchema : tool.jsonSchema);
  return {
    chatTools: tools.map((tool): OpenAIChatTool => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: schema(tool), strict },
    })),
    responsesTools: tools.map((tool): OpenAIResponsesTool => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: schema(tool),
      strict,
    })),
    /** Chat Completions: `message.tool_calls` → `{ role: 'tool', tool_call_id, content }` messages, in order. */
    async handleToolCalls(
      toolCalls: readonly { id: string; type: string; function?: { name: string; arguments: string } }[] | null | undefined,
      signal?: AbortSignal,
    ): Promise<{ role: 'tool'; tool_call_id: string; content: string }[]> {
      const messages: { role: 'tool'; tool_call_id: string; content: string }[] = [];
      // One model response: one turn of the session's history (what undo() undoes).
      if ((toolCalls ?? []).some((call) => call.type === 'function')) await session.turn();
      for (const call of toolCalls ?? []) {
        if (call.type !== 'function' || call.function === undefined) continue;
        const result = await runNamedTool(session, tools, call.function.name, call.function.arguments, signal);
        messages.push({ role: 'tool', tool_call_id: call.id, content: resultText(result) });
      }
      return messages;
    },
    /** Responses API: the `function_call` items of `response.output` → `function_call_output` items. */
    async handleFunctionCalls(
      output: readonly OpenAIResponseItem[],
      signal?: AbortSignal,
    ): Promise<{ type: 'function_call_output'; call_id: string; output: string }[]> {
      const items: { type: 'function_call_output'; call_id: string; output: string }[] = [];
      if (output.some((item) => item.type === 'function_call')) await session.turn();
      for (const item of output) {
        if (item.type !== 'function_call' || typeof item.call_id !== 'string' || typeof item.name !== 'string') continue;
        const result = await runNamedTool(session, tools, item.name, item.arguments ?? '', signal);
        items.push({ type: 'function_call_output', call_id: item.call_id, output: resultText(result) });
      }
      return items;
    },
  };
}
export { ToolCallFailedError } from './shared.js';
