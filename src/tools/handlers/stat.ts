import { z } from 'zod';
import type { StatResult } from '../../workspace/types.js';
import { defineTool } from '../../session/define-tool.js';
import { count, guard, ok, pathParam, READ_ONLY } from './shared.js';

export function statTool() {
  return defineTool({
    name: 'stat',
    annotations: READ_ONLY,
    description: 'Show what a path is: file, directory or link, its size in bytes, modification time and MIME type when known.',
    parameters: z.object({ path: pathParam('Path to inspect') }),
    handler: guard('stat', async ({ path }, { filesystem }) => {
      const s = await filesystem.stat(path);
      return ok(describeStat(s).join(', '), statValue(s));
    }),
  });
}

/** The parts of `stat`'s one-line answer (also the start of `file_info`'s). */
export function describeStat(s: StatResult): string[] {
  const kind = kindOf(s);
  const parts = [`${s.path}: ${s.isSymlink ? `symbolic link to a ${kind}` : kind}`];
  if (s.isFile) parts.push(count(s.sizeBytes, 'byte'));
  if (s.mimeType !== undefined && s.isFile) parts.push(s.mimeType);
  if (s.modifiedAt !== undefined) parts.push(`modified ${s.modifiedAt.toISOString()}`);
  if (s.version !== undefined) parts.push(`version ${s.version}`);
  return parts;
}

export function statValue(s: StatResult) {
  return {
    path: s.path,
    type: kindOf(s),
    isSymlink: s.isSymlink,
    sizeBytes: s.sizeBytes,
    ...(s.mimeType === undefined ? {} : { mimeType: s.mimeType }),
    ...(s.modifiedAt === undefined ? {} : { modifiedAt: s.modifiedAt.toISOString() }),
    ...(s.createdAt === undefined ? {} : { createdAt: s.createdAt.toISOString() }),
    ...(s.version === undefined ? {} : { version: s.version }),
  };
}

function kindOf(s: StatResult): 'directory' | 'file' | 'other' {
  return s.isDirectory ? 'directory' : s.isFile ? 'file' : 'other';
}
