import type { Session, ToolContext, ToolResult } from '../../src/session/types.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { workspaceTools, type WorkspaceTool, type WorkspaceToolName } from '../../src/tools/index.js';
import type { WorkspaceToolsOptions } from '../../src/tools/index.js';

/** Calls a tool's handler the way `session.runTool` does: parameters parsed by the tool's zod schema first. */
export function toolCaller(filesystem: SnapshotableWorkspace, options: WorkspaceToolsOptions = {}) {
  const tools = new Map<string, WorkspaceTool>(workspaceTools(options).map((t) => [t.name, t]));
  const context: ToolContext = { filesystem, session: {} as Session };
  return async (name: WorkspaceToolName, params: unknown): Promise<ToolResult> => {
    const tool = tools.get(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    const parsed = tool.parameters.safeParse(params);
    if (!parsed.success) throw new Error(`invalid params for ${name}: ${parsed.error.message}`);
    return tool.handler(parsed.data, context);
  };
}

export function codeOf(result: ToolResult): string | undefined {
  return (result.value as { code?: string } | undefined)?.code;
}
