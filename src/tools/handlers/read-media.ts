import { z } from 'zod';
import { defineTool } from '../../session/define-tool.js';
import { failure } from '../failure.js';
import { mediaType, type ToolMedia } from '../../workspace/media.js';
import { count, guard, ok, pathParam, READ_ONLY, type ToolDeps } from './shared.js';

/**
 * `read_media`: an image or audio file as base64 with its MIME type, in `value.media` (over MCP, an image
 * or audio content block the client shows the model). The type comes from the bytes' signature, else the
 * extension; anything else is refused, as is a file over `maxMediaBytes` (checked before reading).
 */
export function readMediaTool({ limits }: ToolDeps) {
  return defineTool({
    name: 'read_media',
    annotations: READ_ONLY,
    description:
      `Read an image (PNG, JPEG, GIF, WebP, BMP, SVG) or audio file (MP3, WAV, OGG, FLAC) so that you can see or hear it; at most ${limits.maxMediaBytes} bytes. ` +
      'For text files use read_file.',
    parameters: z.object({ path: pathParam('Image or audio file to read') }),
    handler: guard('read_media', async ({ path }, { filesystem }) => {
      const stat = await filesystem.stat(path);
      if (stat.isFile && stat.sizeBytes > limits.maxMediaBytes)
        return failure(
          'EFBIG',
          `${stat.path} is ${count(stat.sizeBytes, 'byte')}; read_media returns at most ${limits.maxMediaBytes}. Use a smaller or downscaled copy.`,
          { path: stat.path, reason: 'too_large' },
        );
      const { path: shown, content } = await filesystem.readBytes(path);
      const mimeType = mediaType(shown, content);
      if (mimeType === undefined)
        return failure(
          'EINVAL',
          `${shown} is not an image or audio file read_media knows (${stat.mimeType ?? 'unknown type'}). Use read_file for text, stat for its details.`,
          { path: shown },
        );
      const media: ToolMedia = {
        type: mimeType.startsWith('audio/') ? 'audio' : 'image',
        mimeType,
        data: Buffer.from(content).toString('base64'),
      };
      return ok(`${media.type === 'image' ? 'Image' : 'Audio'} ${shown} (${mimeType}, ${count(content.byteLength, 'byte')}).`, {
        path: shown,
        mimeType,
        sizeBytes: content.byteLength,
        media,
      });
    }),
  });
}
