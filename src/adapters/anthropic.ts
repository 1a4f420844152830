import type { Session } from '../session/types.js';
import { adapterTools, resultText, runNamedTool, type AdapterOptions } from './shared.js';

/** A Messages API client tool (`Anthropic.Tool`). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}
/** A `tool_result` content block (`Anthropic.ToolResultBlockParam`). */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error: boolean;
}

/**
 * sessionfs tools for the Anthropic SDK (@anthropic-ai/sdk 1.x, Messages API). `tools` goes in
 * `messages.create({ tools })`; `handleToolUse(response.content)` runs every `tool_use` block through
 * `session.runTool` and returns the `tool_result` blocks for the next user message. A failure is rolled back
 * and comes back with `is_error: true`. Each response's calls are one turn of `session.history()`.
 */
export function anthropicTools(session: Session, options: AdapterOptions = {}) {
  const tools = adapterTools(options);
  return {
    tools: tools.map((tool): AnthropicTool => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.jsonSchema as AnthropicTool['input_schema'],
    })),
    async handleToolUse(
      content: readonly { type: string; id?: string; name?: string; input?: unknown }[],
      signal?: AbortSignal,
    ): Promise<AnthropicToolResult[]> {
      const results: AnthropicToolResult[] = [];
      // One model response: one turn of the session's history (what undo() undoes).
      if (content.some((block) => block.type === 'tool_use')) await session.turn();
      for (const block of content) {
        if (block.type !== 'tool_use' || block.id === undefined || block.name === undefined) continue;
        const result = await runNamedTool(session, tools, block.name, block.input ?? {}, signal);
        results.push({ type: 'tool_result', tool_use_id: block.id, content: resultText(result), is_error: !result.success });
      }
      return results;
    },
  };
}
export { ToolCallFailedError } from './shared.js';
