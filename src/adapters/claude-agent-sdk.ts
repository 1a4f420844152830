import '../zod-version.js';
import type { McpSdkServerConfigWithInstance } from '@anthropic-ai/claude-agent-sdk';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { buildMcpServer } from '../cli/mcp-server.js';
import type { Session } from '../session/types.js';
import type { WorkspaceToolsOptions } from '../tools/index.js';

export interface ClaudeAgentSdkOptions {
  /** The server's name: its key in `mcpServers`, so the model sees `mcp__<name>__read_file`. Default `sessionfs`. */
  name?: string;
  /** Options of the tool suite. */
  toolOptions?: WorkspaceToolsOptions;
}

/**
 * sessionfs as an in-process MCP server for the Claude Agent SDK (@anthropic-ai/claude-agent-sdk), what its
 * `createSdkMcpServer` returns: `query({ prompt, options: { mcpServers: { sessionfs: server } } })`. It is
 * the server `sessionfs mcp` runs (the workspace tools plus `snapshot`, `restore`, `diff`), so raw arguments
 * reach `session.runTool` (nulls read as absent, unknown keys named) and a failed call is rolled back and
 * answered with `isError: true`.
 */
export async function claudeAgentSdkServer(session: Session, options: ClaudeAgentSdkOptions = {}): Promise<McpSdkServerConfigWithInstance> {
  const name = options.name ?? 'sessionfs';
  let instance: McpServer | undefined;
  await buildMcpServer(
    session,
    { name, ...(options.toolOptions === undefined ? {} : { tools: options.toolOptions }) },
    (info, serverOptions) => {
      instance = new McpServer(info, serverOptions);
      return instance.server;
    },
  );
  return { type: 'sdk', name, instance: instance as McpServer };
}
