import type { ToolCallResult } from './types.js';

/**
 * The text a model reads for a call's result, the same over MCP and every SDK adapter: a failure starts
 * `Error [CODE]:` and says when it was rolled back.
 */
export function resultText(result: Pick<ToolCallResult, 'success' | 'message' | 'code' | 'rolledBack' | 'value'>): string {
  if (result.success) return result.message;
  const code = result.code ?? (result.value as { code?: string } | undefined)?.code;
  let text = code !== undefined && !result.message.startsWith('Error [') ? `Error [${code}]: ${result.message}` : result.message;
  if (result.rolledBack) text += '\n(This call was rolled back: the workspace is exactly as it was before it.)';
  return text;
}
