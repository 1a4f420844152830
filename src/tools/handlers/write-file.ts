import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import type { WriteMode } from '../../workspace/types.js';
import { defineTool } from '../../session/define-tool.js';
import { failure } from '../failure.js';
import { isRefusal, trackingKey } from '../read-tracker.js';
import { asTextFile, encodeForWrite, keptFormat, type TextFile } from '../text-file.js';
import { changes, count, encodingParam, guard, ok, pathParam, type ToolDeps } from './shared.js';

export function writeFileTool({ limits, tracker }: ToolDeps) {
  return defineTool({
    name: 'write_file',
    annotations: changes(true, false),
    description:
      `Write a text file, creating missing parent directories. mode 'overwrite' (default) replaces the file, 'create' fails if it exists, 'append' adds to the end. ` +
      `At most ${limits.maxWriteChars} characters per call: write larger files in parts with mode 'append'.`,
    parameters: z.object({
      path: pathParam('File to write'),
      content: z.string().describe('The full text to write (or to append).'),
      mode: z.enum(['overwrite', 'create', 'append']).optional().describe("'overwrite' (default), 'create' or 'append'."),
      encoding: encodingParam.optional(),
    }),
    handler: guard('write_file', async ({ path, content, mode, encoding }, context) => {
      const { filesystem } = context;
      const writeMode: WriteMode = mode ?? 'overwrite';
      const target = displayPath(normalizePath(path));
      if (content.length > limits.maxWriteChars) {
        return failure(
          'EFBIG',
          `content is ${content.length} characters; one write_file call may carry at most ${limits.maxWriteChars}. Nothing was written. ` +
            `Write the first part with write_file, then add the rest in further calls with mode 'append'.`,
          { path: target, reason: 'too_large' },
        );
      }
      const existed = await filesystem.exists(path);
      let before: Uint8Array | undefined;
      let existing: TextFile | undefined;
      let version: number | undefined;
      if (existed && writeMode !== 'create') {
        const refused = tracker.refuseUnread(trackingKey(context), target, 'write_file');
        if (refused !== undefined) return refused;
        version = await tracker.versionBeforeRead(trackingKey(context), filesystem, target);
        before = (await filesystem.readBytes(path)).content;
        const stale = tracker.refuseStale(trackingKey(context), target, before, 'write_file');
        if (stale !== undefined) return stale;
        existing = asTextFile(target, before, encoding);
      }
      const bytes = encodeForWrite(content, existing, { mode: writeMode, preserve: limits.preserveLineEndings, encoding, path: target });
      const result = await tracker.writeUnchanged(filesystem, target, bytes, { mode: writeMode }, version, 'write_file');
      if (isRefusal(result)) return result;
      tracker.markSeen(trackingKey(context), result.path, writeMode === 'append' && before !== undefined ? concat(before, bytes) : bytes);
      const size = count(result.bytesWritten, 'byte');
      const kept = keptFormat(existing, bytes);
      const message =
        writeMode === 'append'
          ? `Appended ${size} to ${result.path}${existed ? '' : ' (new file)'}${kept}.`
          : `${existed ? 'Overwrote' : 'Created'} ${result.path} (${size}${kept}).`;
      return ok(message, { path: result.path, bytesWritten: result.bytesWritten, mode: writeMode, created: !existed });
    }),
  });
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.byteLength + second.byteLength);
  joined.set(first);
  joined.set(second, first.byteLength);
  return joined;
}
