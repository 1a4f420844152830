import { copyBytes } from '../workspace/bytes.js';
import { mediaType } from '../workspace/media.js';
import { AbortError, InvalidArgumentError, IsADirectoryError, LimitExceededError } from '../workspace/errors.js';
import { guessMimeType } from '../workspace/mime.js';
import { decodeUtf8 } from '../workspace/text.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import type { Session, SessionOutput } from './types.js';

/**
 * A session's outbox: the files sent to the user, each pinned to its bytes at the moment it was sent (a
 * later write, a rollback or a reset does not change what was sent). The bytes are copied when sent, so an
 * output outlives the snapshot it names (a reset disposes the workspace that took it).
 */
export class Outbox {
  readonly #outputs: { output: SessionOutput; bytes: Uint8Array }[] = [];
  #next = 1;

  get outputs(): readonly SessionOutput[] {
    return this.#outputs.map(({ output }) => ({ ...output }));
  }

  /** How many outputs are recorded (a mark to drop back to when the call that sent them fails). */
  get size(): number {
    return this.#outputs.length;
  }

  /** Forgets the outputs recorded after `mark`: the call that sent them failed and was rolled back. */
  dropAfter(mark: number): void {
    this.#outputs.length = Math.min(this.#outputs.length, mark);
  }

  /**
   * Records `path` as it is in `workspace` now: its bytes, a snapshot of the workspace, its MIME type (from
   * its bytes for images and audio, its name otherwise, `text/plain` for nameless UTF-8 text).
   */
  async send(
    workspace: SnapshotableWorkspace,
    path: string,
    options: { description?: string; maxBytes: number; signal?: AbortSignal },
  ): Promise<SessionOutput> {
    const stat = await workspace.stat(path);
    if (stat.isDirectory) throw new IsADirectoryError(stat.path, `${stat.path} is a directory: send_file sends one file`);
    if (stat.sizeBytes > options.maxBytes)
      throw new LimitExceededError(`${stat.path} is ${stat.sizeBytes} bytes; send_file sends at most ${options.maxBytes}`, stat.path);
    const { path: shown, content } = await workspace.readBytes(path);
    const snapshot = await workspace.snapshot({ tag: `send_file ${shown}` });
    // An aborted call is rolled back and taken as not done: nothing may be sent after the abort.
    if (options.signal?.aborted === true) throw new AbortError(`send_file was aborted; ${shown} was not sent`, shown);
    const output: SessionOutput = {
      id: `output-${this.#next++}`,
      path: shown,
      sizeBytes: content.byteLength,
      mimeType: mimeTypeOf(shown, content),
      snapshot,
      sentAt: new Date().toISOString(),
    };
    if (options.description !== undefined) output.description = options.description;
    this.#outputs.push({ output, bytes: copyBytes(content) });
    return { ...output };
  }

  /** The bytes sent as output `id` (a copy). */
  read(id: string): Uint8Array {
    const found = this.#outputs.find(({ output }) => output.id === id);
    if (found === undefined) {
      const known = this.#outputs.map(({ output }) => output.id);
      throw new InvalidArgumentError(
        `unknown output id ${JSON.stringify(id)}; ${known.length === 0 ? 'nothing has been sent' : `known ids: ${known.join(', ')}`}`,
      );
    }
    return copyBytes(found.bytes);
  }

  /** An outbox holding the same outputs (for a fork), numbering on from where this one is. */
  copy(): Outbox {
    const copy = new Outbox();
    copy.#outputs.push(...this.#outputs.map((entry) => ({ output: entry.output, bytes: entry.bytes })));
    copy.#next = this.#next;
    return copy;
  }
}

function mimeTypeOf(path: string, bytes: Uint8Array): string {
  const media = mediaType(path, bytes);
  if (media !== undefined) return media;
  const byName = guessMimeType(path);
  if (byName !== 'application/octet-stream') return byName;
  return !bytes.includes(0) && decodeUtf8(bytes) !== undefined ? 'text/plain' : byName;
}

/** Which outbox belongs to which session: how `send_file`'s handler, given only `context.session`, finds it. */
const outboxes = new WeakMap<Session, Outbox>();

export function registerOutbox(session: Session, outbox: Outbox): void {
  outboxes.set(session, outbox);
}

/** The session's outbox; `undefined` for a session not made by `createSession` (it has none). */
export function outboxOf(session: Session): Outbox | undefined {
  return outboxes.get(session);
}
