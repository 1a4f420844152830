/**
 * What deepagents' `FilesystemBackend` (deepagents 1.x) does to file contents, reproduced so a session
 * backend answers its agents exactly as it would: the MIME type it guesses from the extension (which decides
 * text or binary), the read window, and the edit's string replacement with its messages.
 */

/** deepagents' table, less the entries that are its default `text/plain`. */
const MIME_BY_EXTENSION: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries({
    'application/javascript': 'js mjs cjs',
    'application/json': 'json',
    'application/pdf': 'pdf',
    'application/vnd.ms-powerpoint': 'ppt',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
    'audio/aac': 'aac',
    'audio/aiff': 'aiff',
    'audio/flac': 'flac',
    'audio/mpeg': 'mp3',
    'audio/ogg': 'ogg',
    'audio/wav': 'wav',
    'image/gif': 'gif',
    'image/heic': 'heic',
    'image/heif': 'heif',
    'image/jpeg': 'jpg jpeg',
    'image/png': 'png',
    'image/svg+xml': 'svg',
    'image/webp': 'webp',
    'text/css': 'css',
    'text/csv': 'csv',
    'text/html': 'html htm',
    'text/markdown': 'md markdown',
    'text/xml': 'xml',
    'video/3gpp': '3gpp',
    'video/mp4': 'mp4',
    'video/mpeg': 'mpeg mpg',
    'video/quicktime': 'mov',
    'video/webm': 'webm',
    'video/x-flv': 'flv',
    'video/x-ms-wmv': 'wmv',
    'video/x-msvideo': 'avi',
  }).flatMap(([mime, extensions]) => extensions.split(' ').map((extension) => [extension, mime])),
);

export function mimeTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return (dot > 0 ? MIME_BY_EXTENSION[name.slice(dot + 1).toLowerCase()] : undefined) ?? 'text/plain';
}

export function isTextMimeType(mime: string): boolean {
  return mime.startsWith('text/') || mime === 'application/json' || mime === 'application/javascript' || mime === 'image/svg+xml';
}

export const EMPTY_CONTENT_WARNING = 'System reminder: File exists but has empty contents';

/** A text read's window: the lines `offset` (0-based) to `offset + limit`, as deepagents pages them. */
export function readWindow(content: string, mimeType: string, offset: number, limit: number) {
  if (content.trim() === '') return { content: EMPTY_CONTENT_WARNING, mimeType };
  const start = Number.isFinite(offset) ? Math.max(0, Math.floor(offset)) : 0;
  const count = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
  const lines = content.split('\n');
  const totalLines = lines.at(-1) === '' ? lines.length - 1 : lines.length;
  if (start >= totalLines) return { error: `Line offset ${start} exceeds file length (${totalLines} lines)` };
  const selected = lines.slice(start, Math.min(start + count, lines.length));
  if (selected.length === 0 || count === 0) return { content: selected.join('\n'), mimeType };
  const endLine = Math.min(start + count, totalLines);
  const result = { content: selected.join('\n'), mimeType, totalLines, startLine: start + 1, endLine };
  return endLine < totalLines ? { ...result, nextOffset: endLine } : result;
}

/** The edited text and how many replacements, or deepagents' message for why not. */
export function replaceString(content: string, oldString: string, newString: string, replaceAll: boolean): [string, number] | string {
  if (content === '' && oldString === '') return [newString, 0];
  if (oldString === '') return 'Error: oldString cannot be empty when file has content';
  const parts = content.split(oldString);
  const occurrences = parts.length - 1;
  if (occurrences === 0) return `Error: String not found in file: '${oldString}'`;
  if (occurrences > 1 && !replaceAll)
    return `Error: String '${oldString}' has multiple occurrences (appears ${occurrences} times) in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.`;
  return [parts.join(newString), occurrences];
}
