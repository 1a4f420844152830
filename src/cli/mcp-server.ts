import { Server, type ServerOptions } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type EmbeddedResource,
  type Implementation,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { defineTool } from '../session/define-tool.js';
import { resultText } from '../session/result-text.js';
import type { Session, Tool, ToolCallResult, ToolResult } from '../session/types.js';
import type { WorkspaceSnapshot } from '../workspace/types.js';
import { SnapshotRestoreError } from '../workspace/errors.js';
import { workspacePrompt, type WorkspaceToolsOptions } from '../tools/index.js';
import { workspaceTools } from '../shell/index.js';
import { scrubHostPaths } from '../session/scrub.js';
import { failure, failureFromError } from '../tools/failure.js';
import { mediaOf } from '../workspace/media.js';
import { serveClientRoots } from './mcp-client-roots.js';
import type { HostArea } from './mcp-roots.js';
import { scopedWorkspace } from './root-scope.js';
import type { DirectLane, ToolCallHandler } from './mcp-stdio.js';
import { sentFileResource } from './output-content.js';
import { patchResource, reviewTools, writeBackTool, type DirectTool } from './mcp-review.js';
import { historyTools } from './mcp-history.js';
import { hydrationNotices, type HydrationFeed } from './mcp-hydration.js';
import { startFailureNotice } from './mcp-start-failure.js';
import type { ExportResult } from '../export/export-plan.js';
import type { WriteBackOptions } from '../export/write-back.js';

export interface McpServerOptions {
  /** Options of the tool suite (limits, read-before-write). */
  tools?: WorkspaceToolsOptions;
  /** Host paths (host sources, allowed roots) that must never appear in what the model sees. */
  redact?: readonly string[];
  /**
   * The host directories the server was started with (host sources, `--root`, allowed roots): the MCP
   * client's roots are judged against them (docs/mcp-and-cli.md, "Roots"). Without any, every client root is refused.
   */
  hostAreas?: readonly HostArea[];
  /**
   * Writes the changes back to the host folders (`write_back` tool: planned with `dry_run`, applied after the
   * user confirms through MCP elicitation). Default: the session's own `writeBack` when it was hydrated
   * from mounts; without either, no `write_back` tool is listed.
   */
  writeBack?: (options: WriteBackOptions) => Promise<ExportResult>;
  /** Apply `write_back` without asking when the client cannot be asked (no elicitation). Default false. */
  allowWriteBack?: boolean;
  /** Serve `history`, `undo` and `redo` (see mcp-history.ts; a read-only session gets `history` only). Default false. */
  historyTools?: boolean;
  /** Server name and version reported to the client. */
  name?: string;
  version?: string;
}

/**
 * A session still starting (`sessionfs mcp` hydrating its mounts after answering `initialize`): the server
 * lists its tools at once and every call waits for `ready`; a call after a failed start fails. `readOnly`
 * says which tools to list before the session exists.
 */
export interface StartingSession {
  ready: Promise<Session>;
  readOnly: boolean;
  /** How its hydration goes: told to the client as log messages, and as progress to the calls waiting (mcp-hydration.ts). */
  hydration?: HydrationFeed;
}

/** What a model sees of a snapshot: never the record itself, which carries the host root. */
interface SnapshotSummary {
  id: string;
  tag?: string;
  createdAt: string;
}

const INITIAL = 'initial';

/**
 * The workspace tools plus `snapshot`, `restore` and `diff`, served over MCP. Every call goes through
 * `session.runTool`, so a failed call is rolled back. Snapshot records stay here, by id; a model only ever
 * sees `{ id, tag, createdAt }`. The snapshot `initial` is the workspace as the server started.
 *
 * Built on the SDK's low-level `Server` rather than `McpServer.registerTool` on purpose: the tools' JSON
 * Schemas come from `defineTool` (one converter for every consumer), and raw arguments go to
 * `session.runTool`, which validates them with the tool's zod schema and reports failures the same way as
 * for any other caller.
 */
export async function createMcpServer(session: Session, options: McpServerOptions = {}): Promise<Server> {
  return (await buildMcpServer(session, options)).server;
}

/**
 * `createMcpServer`, and the direct lane of `sessionfs mcp`'s stdio transport (McpStdioTransport): the
 * function the SDK's `tools/call` handler calls, so both ways to a call run the same code. `makeServer`
 * builds the SDK server the handlers go on (the Claude Agent SDK adapter's is inside an `McpServer`).
 */
export async function buildMcpServer(
  source: Session | StartingSession,
  options: McpServerOptions = {},
  makeServer: (info: Implementation, serverOptions: ServerOptions) => Server = (info, serverOptions) => new Server(info, serverOptions),
): Promise<{ server: Server; lane: DirectLane }> {
  const starting = 'ready' in source ? source : { ready: Promise.resolve(source), readOnly: source.filesystem.readOnly };
  let started: Session | undefined = 'ready' in source ? undefined : source;
  starting.ready.then(
    (session) => (started = session),
    () => undefined, // a call after a failed start says so (see callTool); the starter reports why
  );
  // The starting state is snapshotted when first needed: before the first call that may change the
  // workspace (which waits for it), or when a call names it. Taken at start, it held every read behind it
  // (an outside operation goes before the calls asked after it), and on a big host root it waits for the
  // session's baseline. Only tool calls change the workspace, so nothing changed before then.
  // Through the view outside calls (taken here, outside any): a read-only call naming it (diff) may take it.
  // Taken when the session is ready, in this (outside) context, whichever call first waits for it.
  const outside = starting.ready.then((session) => session.filesystem);
  outside.catch(() => undefined);
  let initial: Promise<WorkspaceSnapshot> | undefined;
  const initialSnapshot = (): Promise<WorkspaceSnapshot> => (initial ??= outside.then((view) => view.snapshot({ tag: INITIAL })));
  const records = new Map<string, WorkspaceSnapshot>();

  const lookup = async (id: string): Promise<WorkspaceSnapshot> => {
    if (id === INITIAL && !records.has(INITIAL)) records.set(INITIAL, await initialSnapshot());
    const record = records.get(id);
    if (record === undefined) {
      const known = [...records.keys()];
      throw new SnapshotRestoreError(`unknown snapshot id ${JSON.stringify(id)}; known ids: ${known.join(', ')}`);
    }
    return record;
  };
  const summary = (id: string, record: WorkspaceSnapshot): SnapshotSummary => ({
    id,
    ...(record.tag === undefined ? {} : { tag: record.tag }),
    createdAt: record.createdAt,
  });

  const snapshotTool = defineTool({
    name: 'snapshot',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    description: `Save the current state of the workspace and return its id, to restore or diff against later. The id "${INITIAL}" is the workspace as the session started.`,
    parameters: z.object({ tag: z.string().max(200).optional().describe('A short label to remember the snapshot by.') }),
    handler: async ({ tag }, { filesystem }): Promise<ToolResult> => {
      try {
        const record = await filesystem.snapshot(tag === undefined ? {} : { tag });
        records.set(record.id, record);
        return {
          success: true,
          message: `Snapshot ${record.id}${tag === undefined ? '' : ` (${tag})`} saved.`,
          value: summary(record.id, record),
        };
      } catch (error) {
        return failureFromError('snapshot', error, filesystem);
      }
    },
  });

  const restoreTool = defineTool({
    name: 'restore',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    description: `Put the workspace back exactly as it was at a snapshot (an id from the snapshot tool, or "${INITIAL}"). Everything changed since is undone.`,
    parameters: z.object({ id: z.string().min(1).describe('Snapshot id.') }),
    handler: async ({ id }, { filesystem }): Promise<ToolResult> => {
      try {
        const result = await filesystem.restore(await lookup(id));
        const skipped =
          result.skipped.length === 0
            ? ''
            : ` ${result.skipped.length} entries were left alone: ${result.skipped.map((s) => `${s.path} (${s.reason})`).join(', ')}.`;
        return { success: true, message: `Restored snapshot ${id}.${skipped}`, value: { id, skipped: result.skipped } };
      } catch (error) {
        return failureFromError('restore', error, filesystem);
      }
    },
  });

  // A read-only session serves the tools that change nothing: listing a write tool (or restore, or the
  // shell) only to refuse every call to it would say the opposite of the workspace.
  const readOnly = starting.readOnly;
  const offered: Tool[] = [...workspaceTools(options.tools), snapshotTool, restoreTool, ...reviewTools({ initial: INITIAL, lookup })];
  const tools = readOnly ? offered.filter((tool) => tool.annotations?.readOnlyHint === true) : offered;
  // A session still starting has no writeBack of its own yet: whoever starts it passes `writeBack` (the CLI does).
  const writeBack = readOnly ? undefined : (options.writeBack ?? (started === undefined ? undefined : sessionWriteBack(started)));
  const withheld = new Set(offered.filter((tool) => !tools.includes(tool)).map((tool) => tool.name));
  if (readOnly) withheld.add('write_back');
  const redact = (text: string): string =>
    scrubHostPaths(text, { ...(started === undefined ? {} : { root: started.filesystem.root }), hostDirs: options.redact ?? [] });
  // The shell reaches every file of the workspace (and a host shell, the host root): the client's roots cannot
  // narrow it, so it is withdrawn while they do. It is the only tool that comes and goes, hence `listChanged`.
  const unscopable = new Set(tools.filter((tool) => tool.name === 'bash').map((tool) => tool.name));
  const visibleTools = (): Tool[] => (roots.scope() === undefined ? tools : tools.filter((tool) => !unscopable.has(tool.name)));

  const server = makeServer(
    { name: options.name ?? 'sessionfs', version: options.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: unscopable.size > 0 }, logging: {} },
      instructions: workspacePrompt({
        ...options.tools,
        readOnly,
        extraTools: [
          { name: 'snapshot { tag? }', summary: 'save the current state; returns an id.' },
          { name: 'restore { id }', summary: `go back to a snapshot ("${INITIAL}" is the starting state).` },
          {
            name: 'diff { from?, to? }',
            summary: 'files added, modified and deleted between snapshots or since one, with their unified diff.',
          },
          { name: 'export_patch { from? }', summary: 'the git patch since the start (or a snapshot), attached for the user.' },
          ...(writeBack === undefined
            ? []
            : [{ name: 'write_back { dry_run? }', summary: 'write the changes back to the host folders, after the user confirms.' }]),
        ].filter((extra) => !withheld.has(extra.name.split(' ')[0] as string)),
      }),
    },
  );

  const direct: DirectTool[] = [
    ...(writeBack === undefined ? [] : [writeBackTool({ server, writeBack, allowWithoutAsking: options.allowWriteBack === true, redact })]),
    ...(options.historyTools === true ? historyTools(() => starting.ready, redact, readOnly) : []),
  ];

  let shownNames: string[] = tools.map((tool) => tool.name);
  const roots = serveClientRoots(server, {
    areas: options.hostAreas ?? [],
    redact,
    onScopeChange: async () => {
      const names = visibleTools().map((tool) => tool.name);
      if (names.length !== shownNames.length) await server.sendToolListChanged().catch(() => undefined);
      shownNames = names;
    },
  });

  const hydration = 'ready' in source && source.hydration !== undefined ? hydrationNotices(server, source.hydration) : undefined;
  const startFailure = startFailureNotice(server, starting.ready, options.redact ?? []);
  const rootsOnInitialized = server.oninitialized;
  server.oninitialized = () => {
    rootsOnInitialized?.();
    hydration?.connected();
    startFailure.initialized();
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    await roots.settled();
    return {
      tools: [...visibleTools(), ...direct].map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.jsonSchema as { type: 'object' },
        ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      })),
    };
  });

  const callTool: ToolCallHandler = async (params, signal, notify = (notification) => server.notification(notification)) => {
    const rootsPending = roots.settled();
    if (rootsPending !== undefined) await rootsPending;
    const directTool = direct.find((tool) => tool.name === params.name);
    if (directTool !== undefined) {
      // Each needs the session: after a failed start, the same answer as every other tool.
      const failed = await starting.ready.then(
        () => undefined,
        (error: unknown) => startFailure.answer(error),
      );
      return failed ?? directTool.call(params.arguments, signal);
    }
    const available = visibleTools();
    const scope = roots.scope();
    const found = available.find((tool) => tool.name === params.name);
    if (found === undefined) {
      const names = available.map((t) => t.name).join(', ');
      const unknown = withheld.has(params.name)
        ? failure('EROFS', `the workspace is read-only: ${params.name} is not offered. Available tools: ${names}.`)
        : failure('EINVAL', `there is no tool named ${JSON.stringify(params.name)}. Available tools: ${names}.`);
      return { content: [{ type: 'text', text: unknown.message }], isError: true };
    }
    const tool: Tool =
      scope === undefined
        ? found
        : {
            ...found,
            handler: (params, context) => found.handler(params, { ...context, filesystem: scopedWorkspace(context.filesystem, scope) }),
          };
    let session: Session;
    try {
      session = await (hydration === undefined ? starting.ready : hydration.waitFor(starting.ready, params._meta?.progressToken, notify));
    } catch (error) {
      return startFailure.answer(error);
    }
    let result: ToolCallResult;
    try {
      if (tool.annotations?.readOnlyHint !== true) await initialSnapshot();
      // A call the client cancels is aborted, so rolled back: the client takes it as not done.
      result = await session.runTool(tool, params.arguments ?? {}, { signal });
    } catch (error) {
      const failed = failureFromError(tool.name, error, session.filesystem);
      return { content: [{ type: 'text', text: redact(failed.message) }], isError: true };
    }
    return toCallToolResult(
      result,
      redact,
      sentFileResource(session, result) ?? (result.success ? patchResource(tool.name, result.value) : undefined),
    );
  };
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(request.params, extra.signal, (notification) => extra.sendNotification(notification)),
  );

  const received = (message: JSONRPCMessage): void => {
    if ('method' in message) roots.received(message.method);
  };
  return { server, lane: { call: callTool, received } };
}

/** The session's own `writeBack` when it was hydrated from host sources (a `HydratedSession`). */
function sessionWriteBack(session: Session): ((options: WriteBackOptions) => Promise<ExportResult>) | undefined {
  const hydrated = session as Session & { hydration?: unknown; writeBack?: (options: WriteBackOptions) => Promise<ExportResult> };
  if (hydrated.hydration === undefined || typeof hydrated.writeBack !== 'function') return undefined;
  return (options) => hydrated.writeBack!(options);
}

/** The result as MCP content: its text, then the image or audio it carries (`read_media`) or the file it sent (`send_file`). */
function toCallToolResult(result: ToolCallResult, redact: (text: string) => string, sent: EmbeddedResource | undefined): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: redact(resultText(result)) }];
  const media = result.success ? mediaOf(result.value) : undefined;
  if (media !== undefined) content.push({ type: media.type, data: media.data, mimeType: media.mimeType });
  if (sent !== undefined) content.push(sent);
  return { content, isError: !result.success };
}
