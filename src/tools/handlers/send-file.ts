import { z } from 'zod';
import { defineTool } from '../../session/define-tool.js';
import { outboxOf } from '../../session/outbox.js';
import { formatBytes } from '../../text/format-bytes.js';
import { failure } from '../failure.js';
import { guard, ok, pathParam, type ToolDeps } from './shared.js';

/**
 * `send_file`: hands a workspace file to the user (the session's outbox, `session.outputs`), pinned to its
 * bytes at this moment. It changes nothing in the workspace, but it is not read-only: what was sent stays
 * sent (so a repeat sends it again), and a failed or aborted call sends nothing.
 */
export function sendFileTool({ limits }: ToolDeps) {
  return defineTool({
    name: 'send_file',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    description:
      `Send a file from the workspace to the user as a result of your work (a report, an image, an archive), with an optional one-line description. ` +
      `What is sent is the file as it is now; later changes do not alter it. At most ${formatBytes(limits.maxSendBytes)}.`,
    parameters: z.object({
      path: pathParam('File to send'),
      description: z.string().max(500).optional().describe('What the file is, in one line, for the user.'),
    }),
    handler: guard('send_file', async ({ path, description }, { filesystem, session, signal }) => {
      const outbox = outboxOf(session);
      if (outbox === undefined) return failure('ETOOL', 'send_file runs only in a session made by createSession: this one has no outbox.');
      const output = await outbox.send(filesystem, path, {
        maxBytes: limits.maxSendBytes,
        ...(description === undefined ? {} : { description }),
        ...(signal === undefined ? {} : { signal }),
      });
      const { id, path: sent, sizeBytes, mimeType } = output;
      return ok(`Sent ${sent} to the user as ${id} (${formatBytes(sizeBytes)}, ${mimeType}).`, {
        output: { id, path: sent, sizeBytes, mimeType, ...(description === undefined ? {} : { description }) },
      });
    }),
  });
}
