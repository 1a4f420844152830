import type { Session, ToolContext, ToolResult } from '../../src/session/types.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { type WorkspaceTool, type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
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

/** A 2x1 PNG: signature, IHDR, IDAT, IEND (real bytes, not a stand-in). */
export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000002000000010806000000f478d4fa0000000d49444154789c63f8cfc0f01f0005000201a3b8e1ee0000000049454e44ae426082',
  'hex',
);

/** A WAV file: RIFF header, PCM format chunk, four samples of 8-bit silence. */
export const WAV = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([40, 0, 0, 0]),
  Buffer.from('WAVEfmt '),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0]),
  Buffer.from('data'),
  Buffer.from([4, 0, 0, 0, 128, 128, 128, 128]),
]);
