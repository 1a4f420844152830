import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CancelledNotificationSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type JSONRPCMessage,
  type ProgressToken,
  type RequestId,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';

/** A `tools/call` request's parameters as the lane hands them over: the shape the SDK's schema checks. */
export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  /** A progress token: the call may be sent progress notifications (while it waits for hydration). */
  _meta?: { progressToken?: ProgressToken };
}

/**
 * Answers one `tools/call`; `signal` aborts when the client cancels the request or the connection closes;
 * `notify` sends a notification about it (default: the server's own channel).
 */
export type ToolCallHandler = (
  params: ToolCallParams,
  signal: AbortSignal,
  notify?: (notification: ServerNotification) => Promise<void>,
) => Promise<CallToolResult>;

/** What the direct lane needs of the server. */
export interface DirectLane {
  call: ToolCallHandler;
  /**
   * Told of every other message as it arrives, before the SDK sees it. A call on the lane starts at once,
   * while the SDK runs a notification's handler a turn later: state such a call depends on (the client's
   * roots, asked for on `initialized`) must be marked pending here, or a call read in the same chunk as the
   * notification would run before it.
   */
  received(message: JSONRPCMessage): void;
}

/** The SDK's stdio transport's default: a message this long without a newline ends the connection. */
const MAX_BUFFER_BYTES = 10 * 1024 * 1024;

/**
 * The MCP stdio transport of `sessionfs mcp`: newline-delimited JSON-RPC on stdin/stdout, as the SDK's
 * `StdioServerTransport`, with a direct lane for `tools/call`.
 *
 * Why the lane: the SDK checks every message against its zod schemas several times on the way in (the
 * message union, the request type, the `tools/call` request twice) and the result once on the way out. For
 * a memory `read_file` that was half the server's time per call (~75 of ~170 µs), more than the read
 * itself. A well-formed `tools/call` (the checks below are the ones those schemas make) goes straight to
 * the lane's `call` (its arguments the JSON as sent: an own `__proto__` key stays a key, which the tools
 * refuse as an unknown parameter), and its result, built by our own code, is sent as it is; every other message (initialize,
 * lists, pings, notifications, responses to the server's requests, a call with a task or a related task,
 * anything malformed) is checked and handled by the SDK as before, so its answers and errors are the SDK's.
 *
 * The lane keeps the SDK's request semantics: a `notifications/cancelled` naming a call in flight aborts
 * its signal and no response is sent for it, a closing connection aborts every call in flight, and a
 * handler that throws is answered with a JSON-RPC error (its `code` when it has an integer one, else
 * internal error).
 */
export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #lane: DirectLane;
  readonly #calls = new Map<RequestId, AbortController>();
  #buffer: Buffer | undefined;
  #started = false;
  #closed = false;

  constructor(lane: DirectLane, stdin: Readable = process.stdin, stdout: Writable = process.stdout) {
    this.#lane = lane;
    this.#stdin = stdin;
    this.#stdout = stdout;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('McpStdioTransport already started (Server.connect starts it)');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onStreamError);
    // Kept after close: a write still under way may fail later, and an 'error' nobody listens to ends the process.
    this.#stdout.on('error', this.#onOutputError);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onStreamError);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#buffer = undefined;
    for (const controller of this.#calls.values()) controller.abort();
    this.#calls.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#closed || this.#stdout.destroyed || this.#stdout.writableEnded) {
        reject(new Error('the connection is closed: the client no longer reads the answers'));
        return;
      }
      const written = this.#stdout.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) reject(error);
      });
      if (written) resolve();
      else this.#stdout.once('drain', resolve);
    });
  }

  readonly #onStreamError = (error: Error): void => this.#report(error);

  /**
   * The client stopped reading (EPIPE, a destroyed pipe): nothing more can be answered, so the connection
   * ends, through `onclose` as when stdin ends, and the server's exit work (the patch, write-back) still runs.
   */
  readonly #onOutputError = (error: Error): void => {
    if (this.#closed) return;
    this.#report(error);
    void this.close();
  };

  /** Tells `onerror`, which must not take the transport down with it. */
  #report(error: unknown): void {
    try {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // a reporter that throws has nothing more to say
    }
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const size = (this.#buffer?.length ?? 0) + bytes.length;
    if (size > MAX_BUFFER_BYTES) {
      this.#buffer = undefined;
      this.#report(new Error(`a message exceeded the maximum of ${MAX_BUFFER_BYTES} bytes`));
      void this.close();
      return;
    }
    let buffer = this.#buffer === undefined ? bytes : Buffer.concat([this.#buffer, bytes]);
    for (let end = buffer.indexOf(10); end !== -1; end = buffer.indexOf(10)) {
      const line = buffer.toString('utf8', 0, end > 0 && buffer[end - 1] === 13 ? end - 1 : end);
      buffer = buffer.subarray(end + 1);
      this.#onLine(line);
      // A message handled above may have closed the transport.
      if (this.#closed) return;
    }
    this.#buffer = buffer.length === 0 ? undefined : buffer;
  };

  /**
   * One line, whatever it holds: a message nothing can handle (a handler that throws on it, such as the
   * SDK's on a response nested thousands deep) is reported and, when it is a request, answered with an
   * internal error; it never ends the server, and the next line is read as usual.
   */
  #onLine(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.#report(error);
      return;
    }
    try {
      this.#dispatch(value);
    } catch (error) {
      this.#report(error);
      if (isObject(value) && typeof value.method === 'string' && isRequestId(value.id))
        this.send({
          jsonrpc: '2.0',
          id: value.id,
          error: { code: ErrorCode.InternalError, message: 'the server could not handle this request' },
        }).catch((sendError: unknown) => this.#report(sendError));
    }
  }

  #dispatch(value: unknown): void {
    if (isPlainToolCall(value)) {
      this.#toolCall(value.id, value.params);
      return;
    }
    const checked = JSONRPCMessageSchema.safeParse(value);
    if (!checked.success) {
      this.#report(checked.error);
      return;
    }
    const message = checked.data;
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) this.#cancel(message);
    this.#lane.received(message);
    this.onmessage?.(message);
  }

  /** A cancellation the SDK would act on (a valid notification naming a truthy id) aborts that call on the lane. */
  #cancel(message: JSONRPCMessage): void {
    const cancelled = CancelledNotificationSchema.safeParse(message);
    const id = cancelled.success ? cancelled.data.params.requestId : undefined;
    if (id) this.#calls.get(id)?.abort(cancelled.data?.params.reason);
  }

  #toolCall(id: RequestId, params: ToolCallParams): void {
    const controller = new AbortController();
    this.#calls.set(id, controller);
    let answer: Promise<CallToolResult>;
    try {
      answer = this.#lane.call(params, controller.signal);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer
      .then(
        (result) => (controller.signal.aborted ? undefined : this.send({ jsonrpc: '2.0', id, result })),
        (error: unknown) => (controller.signal.aborted ? undefined : this.send({ jsonrpc: '2.0', id, error: errorOf(error) })),
      )
      .catch((error: unknown) => this.#report(new Error(`Failed to send response: ${String(error)}`)))
      .finally(() => {
        if (this.#calls.get(id) === controller) this.#calls.delete(id);
      });
  }
}

/** A thrown error as the SDK answers it: its integer `code`, else internal error; its message; its `data`. */
function errorOf(error: unknown): { code: number; message: string; data?: unknown } {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown; data?: unknown };
  return {
    code: Number.isSafeInteger(fields.code) ? (fields.code as number) : ErrorCode.InternalError,
    message: typeof fields.message === 'string' ? fields.message : 'Internal error',
    ...(fields.data === undefined ? {} : { data: fields.data }),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isRequestId = (value: unknown): value is RequestId => typeof value === 'string' || Number.isSafeInteger(value);

/**
 * A `tools/call` request the SDK's schemas would accept as it is, and that needs nothing from it: no
 * task (the SDK answers that it is not supported), no related task. Every key checked, none coerced: a
 * message this does not take goes to the SDK, which accepts or refuses it.
 */
function isPlainToolCall(value: unknown): value is { id: RequestId; params: ToolCallParams } {
  if (!isObject(value) || value.jsonrpc !== '2.0' || value.method !== 'tools/call' || !isRequestId(value.id)) return false;
  for (const key in value) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
  const params = value.params;
  if (!isObject(params) || typeof params.name !== 'string' || params.task !== undefined) return false;
  if (params.arguments !== undefined && !isObject(params.arguments)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  return (
    isObject(meta) && meta[RELATED_TASK_META_KEY] === undefined && (meta.progressToken === undefined || isRequestId(meta.progressToken))
  );
}
