import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../workspace/errors.js';

/** The longest session id a store takes (as `openSession` does). */
export const MAX_SESSION_ID = 1024;
const PLAIN = /^[A-Za-z0-9._@-]$/;
/** File names stay well under the 255 bytes every file system allows. */
const MAX_FILE_NAME = 160;

/**
 * Refuses a session id no store should hold: not a string, empty, longer than 1024 characters, or with a
 * NUL, a path separator or a `.`/`..` name, which no caller means as a name and a careless one means as a
 * path.
 */
export function checkSessionId(sessionId: unknown, what = 'sessionId'): string {
  if (typeof sessionId !== 'string' || sessionId === '') throw new InvalidArgumentError(`${what} must be a non-empty string`);
  if (sessionId.length > MAX_SESSION_ID)
    throw new InvalidArgumentError(`${what} must be at most ${MAX_SESSION_ID} characters, got ${sessionId.length}`);
  if (sessionId.includes('\0')) throw new InvalidArgumentError(`${what} must not contain NUL`);
  if (/[/\\]/.test(sessionId)) throw new InvalidArgumentError(`${what} must not contain '/' or '\\': '${sessionId.slice(0, 80)}'`);
  if (sessionId === '.' || sessionId === '..') throw new InvalidArgumentError(`${what} must not be '${sessionId}'`);
  return sessionId;
}

/**
 * The file name a session's head lives under: `s-` and the id with every character but `A-Z a-z 0-9 . _ @ -`
 * written as `~` and its UTF-16 code unit in four hex digits (reversible, as `WorkspaceNamespace` encodes
 * user ids); an id whose spelling would be too long is named by its sha256 instead. The head file holds the
 * id itself either way, so listing never decodes names.
 */
export function sessionFileName(sessionId: string): string {
  let encoded = 's-';
  for (let index = 0; index < sessionId.length && encoded.length <= MAX_FILE_NAME; index += 1) {
    const char = sessionId[index] as string;
    encoded += PLAIN.test(char) ? char : `~${sessionId.charCodeAt(index).toString(16).padStart(4, '0')}`;
  }
  if (encoded.length <= MAX_FILE_NAME) return `${encoded}.json`;
  return `h-${createHash('sha256').update(sessionId).digest('hex')}.json`;
}
