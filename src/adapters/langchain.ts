import { ToolMessage } from '@langchain/core/messages';
import { DynamicStructuredTool, type ToolRunnableConfig } from '@langchain/core/tools';
import type { Session } from '../session/types.js';
import { adapterTools, resultText, runNamedTool, ToolCallFailedError, type AdapterOptions } from './shared.js';

/**
 * sessionfs tools as LangChain `DynamicStructuredTool`s (@langchain/core 1.x), for
 * `model.bindTools(tools)` and agents. Every call goes through `session.runTool`. Invoked with a tool call
 * (`tool.invoke(aiMessage.tool_calls[0])`, what agents do), a failed call is rolled back and comes back as a
 * `ToolMessage` with `status: 'error'`; invoked with plain arguments, it throws a `ToolCallFailedError`.
 */
export function langchainTools(session: Session, options: AdapterOptions = {}): DynamicStructuredTool[] {
  const tools = adapterTools(options);
  return tools.map(
    (definition) =>
      new DynamicStructuredTool({
        name: definition.name,
        description: definition.description,
        schema: definition.jsonSchema,
        func: async (input: unknown, _runManager, config) => {
          const result = await runNamedTool(session, tools, definition.name, input, config?.signal);
          if (result.success) return result.message;
          const toolCallId = (config as ToolRunnableConfig | undefined)?.toolCall?.id;
          if (toolCallId === undefined) throw new ToolCallFailedError(definition.name, result);
          return new ToolMessage({ content: resultText(result), tool_call_id: toolCallId, name: definition.name, status: 'error' });
        },
      }),
  );
}
export { ToolCallFailedError } from './shared.js';
