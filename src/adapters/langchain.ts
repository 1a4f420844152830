import { ToolMessage } from '@langchain/core/messages';
import {
  DynamicStructuredTool,
  ToolInputParsingException,
  type StructuredToolCallInput,
  type ToolReturnType,
  type ToolRunnableConfig,
  type ToolSchemaBase,
} from '@langchain/core/tools';
import { withNullableOptionals } from '../session/strict-schema.js';
import type { Session, Tool, ToolCallResult } from '../session/types.js';
import { adapterTools, resultText, runNamedTool, ToolCallFailedError, type AdapterOptions } from './shared.js';

/**
 * sessionfs tools as LangChain `DynamicStructuredTool`s (@langchain/core 1.x), for
 * `model.bindTools(tools)` and agents. Every call goes through `session.runTool`. Invoked with a tool call
 * (`tool.invoke(aiMessage.tool_calls[0])`, what agents do), a failed call is rolled back and comes back as a
 * `ToolMessage` with `status: 'error'`; invoked with plain arguments, it throws a `ToolCallFailedError`.
 * A `null` optional argument means "absent", as for `runTool` (the schema LangChain checks accepts it).
 */
export function langchainTools(session: Session, options: AdapterOptions = {}): DynamicStructuredTool[] {
  const tools = adapterTools(options);
  return tools.map((definition) => new SessionTool(session, tools, definition));
}

/** What a tool answers LangChain: the result's text, as a `ToolMessage` with `status: 'error'` when it failed and a call id is known. */
function answer(name: string, result: ToolCallResult, toolCallId: string | undefined): string | ToolMessage {
  if (result.success) return result.message;
  if (toolCallId === undefined) throw new ToolCallFailedError(name, result);
  return new ToolMessage({ content: resultText(result), tool_call_id: toolCallId, name, status: 'error' });
}

const isToolCall = (value: unknown): value is { id?: string; args: unknown } =>
  typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'tool_call';

class SessionTool extends DynamicStructuredTool {
  readonly #session: Session;
  readonly #tools: readonly Tool[];

  constructor(session: Session, tools: readonly Tool[], definition: Tool) {
    super({
      name: definition.name,
      description: definition.description,
      schema: withNullableOptionals(definition.jsonSchema),
      func: async (input: unknown, _runManager, config) => {
        const result = await runNamedTool(session, tools, definition.name, input, config?.signal);
        return answer(definition.name, result, (config as ToolRunnableConfig | undefined)?.toolCall?.id);
      },
    });
    this.#session = session;
    this.#tools = tools;
  }

  /**
   * Arguments LangChain's own check of the JSON Schema refuses would be thrown as a
   * `ToolInputParsingException`; they go to `runTool` instead, which checks them with the tool's zod schema
   * and answers as for any other call (a refusal is `EINVAL`, nothing run): a model gets a tool message it
   * can correct, not an exception that ends the agent's turn.
   */
  override async call<TArg extends StructuredToolCallInput<ToolSchemaBase>, TConfig extends ToolRunnableConfig | undefined>(
    arg: TArg,
    configArg?: TConfig,
    tags?: string[],
  ): Promise<ToolReturnType<NonNullable<TArg>, TConfig, unknown>> {
    try {
      return await super.call(arg, configArg, tags);
    } catch (error) {
      if (!(error instanceof ToolInputParsingException)) throw error;
      const config = configArg as ToolRunnableConfig | undefined;
      const input = isToolCall(arg) ? arg.args : arg;
      const toolCallId = isToolCall(arg) ? arg.id : config?.toolCall?.id;
      const result = await runNamedTool(this.#session, this.#tools, this.name, input, config?.signal);
      return answer(this.name, result, toolCallId) as ToolReturnType<NonNullable<TArg>, TConfig, unknown>;
    }
  }
}

export { ToolCallFailedError } from './shared.js';
