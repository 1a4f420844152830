import { z } from 'zod';
import { defineTool } from '../../session/define-tool.js';
import { splitLines } from '../../workspace/text.js';
import { asTextFile } from '../text-file.js';
import { mediaType } from '../../workspace/media.js';
import { formatBytes } from '../../text/format-bytes.js';
import { describeStat, statValue } from './stat.js';
import { count, guard, ok, pathParam, READ_ONLY } from './shared.js';

/** Files up to this size are read to say how their text is stored; larger ones get `stat`'s facts only. */
const TEXT_DETAILS_MAX_BYTES = 8 * 1024 * 1024;

/**
 * `file_info`: `stat`'s facts plus what a model decides with before reading: for a file, whether it is
 * text (encoding, BOM, line endings, line count), an image or audio (use `read_media`) or other binary;
 * for a directory, how many files and directories it holds. It does not count as reading the file.
 */
export function fileInfoTool() {
  return defineTool({
    name: 'file_info',
    annotations: READ_ONLY,
    description:
      'Describe a file or directory before reading it: kind, size, times, MIME type and, for a text file, its encoding, line endings and line count; for a directory, how many entries it holds. Use it to choose between read_file, read_media and a tail or window read.',
    parameters: z.object({ path: pathParam('File or directory to describe') }),
    handler: guard('file_info', async ({ path }, { filesystem }) => {
      const s = await filesystem.stat(path);
      const parts = describeStat(s);
      const value: Record<string, unknown> = statValue(s);
      if (s.isDirectory) {
        const entries = await filesystem.list(path);
        const dirs = entries.filter((e) => e.isDirectory).length;
        parts.push(`${count(entries.length - dirs, 'file')} and ${count(dirs, 'directory', 'directories')} directly inside`);
        Object.assign(value, { files: entries.length - dirs, directories: dirs });
      } else if (s.isFile && s.sizeBytes <= TEXT_DETAILS_MAX_BYTES) {
        const { content } = await filesystem.readBytes(path);
        const text = asTextFile(s.path, content);
        const media = text === undefined ? mediaType(s.path, content) : undefined;
        if (text !== undefined) {
          const lines = splitLines(text.shown).length;
          const encoding = `${text.decoded.encoding}${text.decoded.bom ? ' with BOM' : ''}`;
          parts.push(`text: ${count(lines, 'line')}, ${encoding}, line endings ${text.style}`);
          Object.assign(value, { kind: 'text', lines, encoding: text.decoded.encoding, bom: text.decoded.bom, lineEndings: text.style });
        } else if (media !== undefined) {
          parts.push(`${media.split('/')[0]} (${media}): read it with read_media`);
          Object.assign(value, { kind: media.startsWith('audio/') ? 'audio' : 'image', mimeType: media });
        } else {
          parts.push('binary (not text)');
          Object.assign(value, { kind: 'binary' });
        }
      } else if (s.isFile) {
        parts.push(`${formatBytes(s.sizeBytes)}: too large to inspect its text; read_file reads it in windows`);
      }
      return ok(parts.join(', '), value);
    }),
  });
}
