import { z } from 'zod';
import { defineTool } from '../../session/define-tool.js';
import { count, guard, ok, pathParam } from './shared.js';

export function statTool() {
  return defineTool({
    name: 'stat',
    description: 'Show what a path is: file, directory or link, its size in bytes, modification time and MIME type when known.',
    parameters: z.object({ path: pathParam('Path to inspect') }),
    handler: guard('stat', async ({ path }, { filesystem }) => {
      const s = await filesystem.stat(path);
      const kind = s.isDirectory ? 'directory' : s.isFile ? 'file' : 'other';
      const parts = [`${s.path}: ${s.isSymlink ? `symbolic link to a ${kind}` : kind}`];
      if (s.isFile) parts.push(count(s.sizeBytes, 'byte'));
      if (s.mimeType !== undefined && s.isFile) parts.push(s.mimeType);
      if (s.modifiedAt !== undefined) parts.push(`modified ${s.modifiedAt.toISOString()}`);
      if (s.version !== undefined) parts.push(`version ${s.version}`);
      return ok(parts.join(', '), {
        path: s.path,
        type: kind,
        isSymlink: s.isSymlink,
        sizeBytes: s.sizeBytes,
        ...(s.mimeType === undefined ? {} : { mimeType: s.mimeType }),
        ...(s.modifiedAt === undefined ? {} : { modifiedAt: s.modifiedAt.toISOString() }),
        ...(s.createdAt === undefined ? {} : { createdAt: s.createdAt.toISOString() }),
        ...(s.version === undefined ? {} : { version: s.version }),
      });
    }),
  });
}
