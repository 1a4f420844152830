// `sessionfs/mcp`: the MCP server `sessionfs mcp` runs, for a transport of your own.
export { createMcpServer, type McpServerOptions } from '../cli/mcp-server.js';
export { userConfirmation } from '../cli/mcp-review.js';
