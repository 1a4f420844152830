import type { EmbeddedResource } from '@modelcontextprotocol/sdk/types.js';
import type { Session, ToolCallResult } from '../session/types.js';
import { decodeUtf8 } from '../workspace/text.js';

/**
 * A successful `send_file` result as an MCP embedded resource: the bytes the session's outbox pinned when the
 * file was sent (text when they are UTF-8 without NUL, base64 otherwise), addressed by a `sessionfs:` URI
 * naming the output and its workspace path (never a host path), meant for the user (`audience`).
 */
export function sentFileResource(session: Session, result: ToolCallResult): EmbeddedResource | undefined {
  if (!result.success || result.value === null || typeof result.value !== 'object' || !('output' in result.value)) return undefined;
  const output = (result.value as { output: unknown }).output;
  if (output === null || typeof output !== 'object') return undefined;
  const { id, path, mimeType } = output as { id?: unknown; path?: unknown; mimeType?: unknown };
  if (typeof id !== 'string' || typeof path !== 'string' || typeof mimeType !== 'string') return undefined;
  const bytes = session.readOutput(id);
  const uri = `sessionfs://outputs/${encodeURIComponent(id)}/${path.split('/').map(encodeURIComponent).join('/')}`;
  const text = bytes.includes(0) ? undefined : decodeUtf8(bytes);
  return {
    type: 'resource',
    resource: text === undefined ? { uri, mimeType, blob: Buffer.from(bytes).toString('base64') } : { uri, mimeType, text },
    annotations: { audience: ['user'] },
  };
}
