import '../zod-version.js';
import type { Session, Tool, ToolCallResult } from '../session/types.js';
import { resultText } from '../session/result-text.js';
import { type WorkspaceToolsOptions } from '../tools/index.js';
import { workspaceTools } from '../shell/index.js';

export { resultText };

/** What every adapter takes: the session the calls run on, and which tools to offer. */
export interface AdapterOptions {
  /** The tools to offer; default `workspaceTools(toolOptions)`. Add your own `defineTool` tools here. */
  tools?: readonly Tool[];
  /** Options of the default tool suite (ignored when `tools` is given). */
  toolOptions?: WorkspaceToolsOptions;
}

export function adapterTools(options: AdapterOptions = {}): readonly Tool[] {
  return options.tools ?? (workspaceTools(options.toolOptions) as readonly Tool[]);
}

/**
 * Runs one model-issued call by tool name through `session.runTool`. An unknown name is a failed result
 * naming the available tools; arguments given as a JSON string (OpenAI) are parsed first.
 */
export async function runNamedTool(
  session: Session,
  tools: readonly Tool[],
  name: string,
  args: unknown,
  signal?: AbortSignal,
): Promise<ToolCallResult> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) {
    return {
      success: false,
      rolledBack: false,
      code: 'EINVAL',
      message: `there is no tool named ${JSON.stringify(name)}. Available tools: ${tools.map((t) => t.name).join(', ')}.`,
    };
  }
  let params = args;
  if (typeof args === 'string') {
    try {
      params = args.trim() === '' ? {} : (JSON.parse(args) as unknown);
    } catch {
      return {
        success: false,
        rolledBack: false,
        code: 'EINVAL',
        message: `invalid parameters for ${name}: the arguments are not valid JSON`,
      };
    }
  }
  return session.runTool(tool, params, signal === undefined ? {} : { signal });
}

/** Thrown by adapters whose SDK reports a failed tool call as a thrown error (AI SDK, LangChain). */
export class ToolCallFailedError extends Error {
  override name = 'ToolCallFailedError';
  constructor(
    readonly tool: string,
    readonly result: ToolCallResult,
  ) {
    super(resultText(result));
  }
  get code(): string | undefined {
    return this.result.code;
  }
  get rolledBack(): boolean {
    return this.result.rolledBack;
  }
}
