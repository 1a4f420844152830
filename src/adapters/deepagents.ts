import '../zod-version.js';
import type {
  BackendProtocolV2,
  DeleteResult,
  EditResult,
  FileDownloadResponse,
  FileInfo,
  FileOperationError,
  FileUploadResponse,
  GlobResult,
  GrepResult,
  LsResult,
  ReadRawResult,
  ReadResult,
  WriteResult,
} from 'deepagents';
import { z } from 'zod';
import { defineTool } from '../session/define-tool.js';
import type { Session, ToolContext } from '../session/types.js';
import { isWorkspaceError } from '../workspace/errors.js';
import type { SnapshotableWorkspace, StatResult } from '../workspace/types.js';
import { isTextMimeType, mimeTypeOf, readWindow, replaceString } from './deepagents-text.js';

/**
 * A deepagents backend (`BackendProtocolV2`, deepagents 1.x) over a session's workspace:
 * `createDeepAgent({ model, backend: deepagentsBackend(session) })`. Paths are deepagents' virtual absolute
 * paths (`/src/app.ts` is the workspace's `src/app.ts`). Results and messages are those of deepagents' own
 * `FilesystemBackend` in virtual mode (differences: docs/tools-and-adapters.md). Every change (`write`,
 * `edit`, `delete`, each file of `uploadFiles`) is a `session.runTool` call, so it is in the session's
 * history and a failed one is rolled back; reads go straight to the workspace.
 */
export function deepagentsBackend(session: Session): BackendProtocolV2 {
  return new SessionBackend(session);
}

const slash = (path: string): string => `/${path}`;
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const decode = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
const encode = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
const failed = (message: string) => ({ success: false, message });

const FILE_ERRORS: Readonly<Record<string, FileOperationError>> = {
  ENOENT: 'file_not_found',
  EACCES: 'permission_denied',
  EPERM: 'permission_denied',
  EROFS: 'permission_denied',
  EISDIR: 'is_directory',
};
const fileError = (error: unknown): FileOperationError => (isWorkspaceError(error) ? FILE_ERRORS[error.code] : undefined) ?? 'invalid_path';

function info(path: string, stat: StatResult): FileInfo {
  const entry: FileInfo = {
    path: stat.isDirectory ? `${slash(path)}/` : slash(path),
    is_dir: stat.isDirectory,
    size: stat.isDirectory ? 0 : stat.sizeBytes,
  };
  if (stat.modifiedAt !== undefined) entry.modified_at = stat.modifiedAt.toISOString();
  return entry;
}
const byPath = (a: FileInfo, b: FileInfo): number => a.path.localeCompare(b.path);

/** Writes text as deepagents does: a binary MIME type means the content is base64. */
async function writeText(filesystem: SnapshotableWorkspace, path: string, content: string): Promise<void> {
  const bytes = isTextMimeType(mimeTypeOf(path)) ? encode(content) : new Uint8Array(Buffer.from(content, 'base64'));
  await filesystem.writeBytes(path, bytes, { mode: 'overwrite', createParents: true });
}

/** A file's text, or deepagents' "not found" when the path is not a file. */
async function readText(filesystem: SnapshotableWorkspace, path: string): Promise<string | undefined> {
  if (!(await filesystem.stat(path)).isFile) return undefined;
  return decode((await filesystem.readBytes(path)).content);
}

const FILE = z.string().describe('Absolute path in the workspace');

const WRITE = defineTool({
  name: 'write_file',
  description: 'deepagents: write a file',
  parameters: z.object({ file_path: FILE, content: z.string() }),
  async handler({ file_path, content }, { filesystem }) {
    try {
      await writeText(filesystem, file_path, content);
      return { success: true, message: `wrote ${file_path}` };
    } catch (error) {
      return failed(`Error writing file '${file_path}': ${reason(error)}`);
    }
  },
});

const EDIT = defineTool({
  name: 'edit_file',
  description: 'deepagents: replace a string in a file',
  parameters: z.object({ file_path: FILE, old_string: z.string(), new_string: z.string(), replace_all: z.boolean() }),
  async handler({ file_path, old_string, new_string, replace_all }, { filesystem }) {
    try {
      const content = await readText(filesystem, file_path);
      if (content === undefined) return failed(`Error: File '${file_path}' not found`);
      const replaced = replaceString(content, old_string, new_string, replace_all);
      if (typeof replaced === 'string') return failed(replaced);
      await filesystem.writeBytes(file_path, encode(replaced[0]), { mode: 'overwrite' });
      return { success: true, message: `replaced ${replaced[1]} occurrence(s) in ${file_path}`, value: replaced[1] };
    } catch (error) {
      return failed(`Error editing file '${file_path}': ${reason(error)}`);
    }
  },
});

const DELETE = defineTool({
  name: 'delete',
  description: 'deepagents: delete a file or a directory with what it holds',
  parameters: z.object({ file_path: FILE }),
  async handler({ file_path }, { filesystem }: ToolContext) {
    try {
      if (!(await filesystem.exists(file_path))) return failed(`Error: '${file_path}' not found`);
      const entries = (await filesystem.stat(file_path)).path === '' ? await filesystem.list('') : [{ path: file_path }];
      for (const entry of entries) await filesystem.delete(entry.path, { recursive: true });
      return { success: true, message: `deleted ${file_path}` };
    } catch (error) {
      return failed(`Error deleting '${file_path}': ${reason(error)}`);
    }
  },
});

const UPLOAD = defineTool({
  name: 'upload_file',
  description: 'deepagents: upload a file (base64)',
  parameters: z.object({ file_path: FILE, content_base64: z.string() }),
  async handler({ file_path, content_base64 }, { filesystem }) {
    await filesystem.writeBytes(file_path, new Uint8Array(Buffer.from(content_base64, 'base64')), {
      mode: 'overwrite',
      createParents: true,
    });
    return { success: true, message: `uploaded ${file_path}` };
  },
});

class SessionBackend implements BackendProtocolV2 {
  readonly #session: Session;

  constructor(session: Session) {
    this.#session = session;
  }

  /** The session's current workspace (a new object after `reset()`). */
  get #files(): SnapshotableWorkspace {
    return this.#session.filesystem;
  }

  async ls(path: string): Promise<LsResult> {
    try {
      if (!(await this.#files.stat(path)).isDirectory) return { files: [] };
      const files: FileInfo[] = [];
      for (const entry of await this.#files.list(path)) {
        const stat = await this.#files.stat(entry.path).catch(() => undefined);
        if (stat !== undefined && (stat.isFile || stat.isDirectory)) files.push(info(entry.path, stat));
      }
      return { files: files.sort(byPath) };
    } catch {
      return { files: [] };
    }
  }

  async read(filePath: string, offset = 0, limit = 500): Promise<ReadResult> {
    try {
      const mimeType = mimeTypeOf(filePath);
      if (!(await this.#files.stat(filePath)).isFile) return { error: `File '${filePath}' not found` };
      const bytes = (await this.#files.readBytes(filePath)).content;
      if (!isTextMimeType(mimeType)) return { content: bytes, mimeType };
      return readWindow(decode(bytes), mimeType, offset, limit);
    } catch (error) {
      return { error: `Error reading file '${filePath}': ${reason(error)}` };
    }
  }

  async readRaw(filePath: string): Promise<ReadRawResult> {
    try {
      const stat = await this.#files.stat(filePath);
      if (!stat.isFile) return { error: `File '${filePath}' not found` };
      const mimeType = mimeTypeOf(filePath);
      const bytes = (await this.#files.readBytes(filePath)).content;
      const modified = (stat.modifiedAt ?? new Date(0)).toISOString();
      const created = stat.createdAt?.toISOString() ?? modified;
      const content = isTextMimeType(mimeType) ? decode(bytes) : bytes;
      return { data: { content, mimeType, created_at: created, modified_at: modified } };
    } catch (error) {
      return { error: `Error reading file '${filePath}': ${reason(error)}` };
    }
  }

  async write(filePath: string, content: string): Promise<WriteResult> {
    const result = await this.#session.runTool(WRITE, { file_path: filePath, content });
    return result.success ? { path: filePath, filesUpdate: null } : { error: result.message };
  }

  async edit(filePath: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    const result = await this.#session.runTool(EDIT, {
      file_path: filePath,
      old_string: oldString,
      new_string: newString,
      replace_all: replaceAll,
    });
    return result.success ? { path: filePath, filesUpdate: null, occurrences: result.value as number } : { error: result.message };
  }

  async delete(filePath: string): Promise<DeleteResult> {
    const result = await this.#session.runTool(DELETE, { file_path: filePath });
    return result.success ? { path: filePath, filesUpdate: null } : { error: result.message };
  }

  async grep(pattern: string, path: string | null = '/', glob: string | null = null, maxCount: number | null = null): Promise<GrepResult> {
    try {
      if (!(await this.#files.exists(path || '/'))) return { matches: [] };
      const found = await this.#files.grep(pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), {
        path: path || '/',
        // deepagents' glob filters like ripgrep's --glob: a pattern without a slash matches the file name at any depth.
        ...(glob ? { glob: glob.includes('/') ? glob : `**/${glob}` } : {}),
        maxMatches: maxCount == null ? Number.MAX_SAFE_INTEGER : maxCount + 1,
      });
      const matches = found.map((match) => ({ path: slash(match.path), line: match.lineNumber, text: match.lineContent }));
      return maxCount == null || matches.length <= maxCount ? { matches } : { matches: matches.slice(0, maxCount), truncated: true };
    } catch {
      return { matches: [] };
    }
  }

  async glob(pattern: string, path = '/'): Promise<GlobResult> {
    try {
      if (!(await this.#files.stat(path)).isDirectory) return { files: [] };
      const files: FileInfo[] = [];
      for (const match of await this.#files.glob(pattern.replace(/^\//, ''), { path, dot: true })) {
        files.push(info(match.path, await this.#files.stat(match.path)));
      }
      return { files: files.sort(byPath) };
    } catch {
      return { files: [] };
    }
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const responses: FileUploadResponse[] = [];
    for (const [path, content] of files) {
      const result = await this.#session.runTool(UPLOAD, { file_path: path, content_base64: Buffer.from(content).toString('base64') });
      responses.push({ path, error: result.success ? null : (FILE_ERRORS[result.code ?? ''] ?? 'invalid_path') });
    }
    return responses;
  }

  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const responses: FileDownloadResponse[] = [];
    for (const path of paths) {
      try {
        responses.push({ path, content: (await this.#files.readBytes(path)).content, error: null });
      } catch (error) {
        responses.push({ path, content: null, error: fileError(error) });
      }
    }
    return responses;
  }
}
