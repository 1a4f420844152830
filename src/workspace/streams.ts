import { copyBytes } from './bytes.js';
import type { BackendDriver, DriverFileHandle, DriverStagedFile } from './driver.js';
import type { DriverProbe } from './probe.js';
import {
  AbortError,
  ConflictError,
  FileExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  IsADirectoryError,
  LimitExceededError,
  NotADirectoryError,
} from './errors.js';
import { writeOptions } from './arguments.js';
import { nonNegativeInteger } from './limits.js';
import { displayPath, type NormalizedPath } from './paths.js';
import type { ReadStreamOptions, WriteMode, WriteOptions, WriteResult, WriteStreamOptions } from './types.js';

/** Bytes per chunk a read stream hands out: large enough for disk speed, small enough for constant memory. */
export const STREAM_CHUNK_BYTES = 1024 * 1024;

/**
 * A write stream's bytes, staged until the close commits them with `writeBytes(path, staged, options)`:
 * in the driver's staging area when it has one (`stageFile`, the host's temp files), else in memory.
 * `byteLength` is what `writeBytes` checks and reports.
 */
export class StagedContent {
  byteLength = 0;
  readonly #native: DriverStagedFile | undefined;
  #chunks: Uint8Array[] = [];

  private constructor(native: DriverStagedFile | undefined) {
    this.#native = native;
  }

  static async open(driver: BackendDriver, path: NormalizedPath): Promise<StagedContent> {
    return new StagedContent(driver.stageFile === undefined ? undefined : await driver.stageFile(path));
  }

  async append(chunk: Uint8Array): Promise<void> {
    if (this.#native !== undefined) await this.#native.write(chunk);
    else this.#chunks.push(chunk); // the write stream's own copy (see openWriteStream)
    this.byteLength += chunk.byteLength;
  }

  /** Puts the bytes at `path` through `driver` (the shared layer's, so watch and versions see the commit). */
  async commit(driver: BackendDriver, path: NormalizedPath, options: { mode: WriteMode; mimeType?: string }): Promise<void> {
    if (this.#native !== undefined && driver.commitStaged !== undefined) return driver.commitStaged(path, this.#native, options);
    const bytes = new Uint8Array(this.byteLength);
    let at = 0;
    for (const chunk of this.#chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    await driver.writeFile(path, bytes, options);
  }

  async discard(): Promise<void> {
    this.#chunks = [];
    await this.#native?.discard();
  }
}

/** What `write` and `writeBytes` accept: bytes, or a write stream's staged content (no `maxWriteBytes` then). */
export type WriteContent = Uint8Array | StagedContent;

/** What `writeBytes` accepts: bytes, or (from `createWriteStream` only) staged content. */
export function isWriteContent(content: unknown): content is WriteContent {
  return content instanceof Uint8Array || content instanceof StagedContent;
}

/** The driver call that stores a write's content. */
export function storeContent(
  driver: BackendDriver,
  path: NormalizedPath,
  content: WriteContent,
  options: { mode: WriteMode; mimeType?: string },
) {
  return content instanceof StagedContent ? content.commit(driver, path, options) : driver.writeFile(path, content, options);
}

/** The read stream of an admitted file path: see `Workspace.createReadStream`. */
export async function openReadStream(
  driver: BackendDriver,
  probe: DriverProbe,
  target: NormalizedPath,
  options: ReadStreamOptions,
): Promise<ReadableStream<Uint8Array>> {
  const shown = displayPath(target);
  const start = nonNegativeInteger(options.start ?? 0, 'start');
  const end = options.end === undefined ? undefined : nonNegativeInteger(options.end, 'end');
  if (end !== undefined && end < start) throw new InvalidArgumentError(`end (${end}) is before start (${start}); end is inclusive`, shown);
  const signal = checkSignal(options.signal);
  await probe.expectFile(target);
  const handle = await probe.call(target, () =>
    driver.openFile === undefined ? rangedHandle(driver, probe, target) : driver.openFile(target),
  );
  const stop = Math.min(handle.sizeBytes, end === undefined ? Infinity : end + 1);
  let position = start;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await handle.close().catch(() => undefined);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        signal?.addEventListener('abort', () => {
          void close();
          controller.error(new AbortError(`reading ${shown} was aborted`));
        });
      },
      async pull(controller) {
        try {
          if (signal?.aborted === true) throw new AbortError(`reading ${shown} was aborted`);
          if (position >= stop) {
            await close();
            controller.close();
            return;
          }
          const chunk = await handle.read(position, Math.min(STREAM_CHUNK_BYTES, stop - position));
          if (chunk.byteLength === 0) position = stop; // the file shrank under an open handle: end here
          position += chunk.byteLength;
          if (chunk.byteLength > 0) controller.enqueue(chunk); // the reader's own (see DriverFileHandle.read)
        } catch (error) {
          await close();
          throw await probe.explain(error, target);
        }
      },
      cancel: close,
    },
    { highWaterMark: 1 },
  );
}

/**
 * A handle for drivers without `openFile`: ranges read with `readFile`, each checked against the version
 * the file had when opened, so a stream never mixes two versions of a file.
 */
async function rangedHandle(driver: BackendDriver, probe: DriverProbe, target: NormalizedPath): Promise<DriverFileHandle> {
  const opened = await probe.statFound(target);
  const { sizeBytes } = await driver.readFile(target, { offset: 0, length: 0 });
  const changed = (): ConflictError =>
    new ConflictError(`${displayPath(target)} changed while it was being read; read it again`, displayPath(target));
  return {
    sizeBytes,
    async read(offset, length) {
      // Checked before the read too: a file removed since the last chunk is a change, not a read of a missing path.
      const before = await probe.stat(target).catch((error: unknown) => {
        if (error instanceof FileNotFoundError || error instanceof NotADirectoryError) return undefined;
        throw error;
      });
      if (before === undefined || before.version !== opened.version) throw changed();
      const { content } = await driver.readFile(target, { offset, length });
      if ((await probe.stat(target)).version !== opened.version) throw changed();
      return copyBytes(content); // readFile may hand out the driver's stored bytes; a chunk is the reader's own
    },
    close: async () => undefined,
  };
}

/**
 * The write stream of an admitted file path: bytes staged as they arrive (checked against the policy's
 * `maxFileBytes` as they come), then committed on close by `commit` (the workspace's own `writeBytes`, so
 * every rule of a write applies once, in one place). An abort or an error discards what was staged.
 */
export async function openWriteStream(
  driver: BackendDriver,
  probe: DriverProbe,
  target: NormalizedPath,
  options: WriteStreamOptions,
  policy: { maxFileBytes?: number } | undefined,
  commit: (content: Uint8Array, options: WriteOptions) => Promise<WriteResult>,
): Promise<WritableStream<Uint8Array>> {
  const maxFileBytes = policy?.maxFileBytes;
  const shown = displayPath(target);
  const { signal: given, ...rest } = options;
  const signal = checkSignal(given);
  writeOptions(rest, shown);
  // Fail before any byte is staged when the outcome is known already; the close checks again, under the lock.
  if (target === '') throw new IsADirectoryError('/');
  const state = await probe.writeTarget(target);
  if (state === 'existing' && options.mode === 'create') throw new FileExistsError(shown);
  if (options.ifVersion !== undefined) await probe.assertVersion(target, state, nonNegativeInteger(options.ifVersion, 'ifVersion'));
  const staged = await probe.call(target, () => StagedContent.open(driver, target));
  let committing = false;
  // A chunk is the caller's again as soon as `write()` returns, not once the sink gets to it: the strategy's
  // size() runs inside `write()` (pipeTo's too), so the copy is taken there, and the sink takes the copies in order.
  const copies: (Uint8Array | undefined)[] = [];
  const strategy: QueuingStrategy<Uint8Array> = {
    highWaterMark: 1,
    size(chunk) {
      copies.push(chunk instanceof Uint8Array ? copyBytes(chunk) : undefined);
      return 1;
    },
  };
  return new WritableStream<Uint8Array>(
    {
      start(controller) {
        signal?.addEventListener('abort', () => {
          if (committing) return;
          controller.error(new AbortError(`writing ${shown} was aborted; nothing was written`, shown));
          void staged.discard();
        });
      },
      async write() {
        const chunk = copies.shift();
        try {
          if (chunk === undefined) throw new InvalidArgumentError('a write stream takes Uint8Array chunks', shown);
          if (maxFileBytes !== undefined && staged.byteLength + chunk.byteLength > maxFileBytes)
            throw new LimitExceededError(`${shown} would be over the policy's maxFileBytes (${maxFileBytes}); nothing was written`, shown);
          await probe.call(target, () => staged.append(chunk));
        } catch (error) {
          await staged.discard();
          throw error;
        }
      },
      async close() {
        committing = true;
        try {
          await commit(staged as unknown as Uint8Array, rest); // writeBytes takes staged content from here only
        } finally {
          await staged.discard();
        }
      },
      abort: () => staged.discard(),
    },
    strategy,
  );
}

function checkSignal(signal: unknown): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (!(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal must be an AbortSignal');
  if (signal.aborted) throw new AbortError('aborted before it started');
  return signal;
}
