import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { scrubHostPaths } from '../session/scrub.js';
import { ConflictError, FileNotFoundError, InvalidArgumentError, WorkspaceError } from '../workspace/errors.js';
import { StoreInspector, UnknownItemError } from './inspect-api.js';
import { sessionName } from './store-flags.js';

/** The page's files: the only ones served, from the `inspect` folder beside this module (or the bundle). */
const ASSETS: Record<string, string> = {
  '/': 'index.html',
  '/inspect.js': 'inspect.js',
  '/inspect.css': 'inspect.css',
};
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};
/** The most a request body may hold (actions take a few ids). */
const MAX_BODY = 16 * 1024;

/** Headers of every answer: no caching, no framing, nothing loaded from elsewhere, the URL (and its token) never sent on. */
const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

export interface InspectServer {
  /** The page's URL, token included: what the user opens. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface InspectServerOptions {
  inspector: StoreInspector;
  /** The session the page opens first. */
  session?: string;
  /** Host directories behind the store: scrubbed from every message. */
  hostDirs: readonly string[];
}

/**
 * Serves the inspector's page and its JSON API on 127.0.0.1, on a port the system picks. Every request must
 * carry the token (`?token=` or the `x-sessionfs-token` header), name the server itself as its Host, and,
 * when it says where it comes from (Origin, Sec-Fetch-Site), come from the page: anything else is 403. No
 * CORS header is ever sent, so another site's script can neither read an answer nor send an action.
 */
export async function startInspectServer(options: InspectServerOptions): Promise<InspectServer> {
  const token = randomBytes(24).toString('base64url');
  const assets = assetDir();
  let origin = '';
  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => answerError(response, error, options.hostDirs));
  });

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', origin);
    if (!allowed(request, url, token, origin)) return answer(response, 403, 'text/plain; charset=utf-8', 'forbidden\n');
    const asset = ASSETS[url.pathname];
    if (asset !== undefined && request.method === 'GET') {
      let body = await readFile(`${assets}/${asset}`, 'utf8');
      if (asset === 'index.html') body = body.replaceAll('{{TOKEN}}', token).replaceAll('{{SESSION}}', escapeHtml(options.session ?? ''));
      return answer(response, 200, TYPES[asset.split('.').pop() as string] as string, body);
    }
    if (!url.pathname.startsWith('/api/')) return answer(response, 404, 'text/plain; charset=utf-8', 'not found\n');
    const result = await route(options.inspector, request, url);
    if (typeof result === 'string') {
      const name = `${url.searchParams.get('name') ?? 'session'}${url.searchParams.has('op') ? `-${url.searchParams.get('op')}` : ''}.patch`;
      response.setHeader('content-disposition', `attachment; filename="${name.replace(/[^\w.-]/g, '_')}"`);
      return answer(response, 200, 'text/x-diff; charset=utf-8', result);
    }
    return answer(response, 200, 'application/json; charset=utf-8', JSON.stringify(result));
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/?token=${token}${options.session === undefined ? '' : `#${encodeURIComponent(options.session)}`}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The token, the Host and (when given) the Origin and Sec-Fetch-Site: the page's own, or the request is refused. */
function allowed(request: IncomingMessage, url: URL, token: string, origin: string): boolean {
  const given = request.headers['x-sessionfs-token'] ?? url.searchParams.get('token') ?? '';
  if (typeof given !== 'string' || !sameSecret(given, token)) return false;
  if (request.headers.host !== origin.slice('http://'.length)) return false;
  const from = request.headers.origin;
  if (from !== undefined && from !== origin) return false;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  // An action must say it comes from the page (a browser always sends Origin on a POST).
  if (request.method !== 'GET' && from !== origin) return false;
  return request.method === 'GET' || request.method === 'POST';
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}

async function route(inspector: StoreInspector, request: IncomingMessage, url: URL): Promise<unknown> {
  const query = (key: string): string => {
    const value = url.searchParams.get(key);
    if (value === null || value === '') throw new InvalidArgumentError(`missing ${key}`);
    return value;
  };
  const name = (value: string): string => sessionName(value, 'the session name');
  if (request.method === 'GET') {
    switch (url.pathname) {
      case '/api/sessions':
        return inspector.sessions();
      case '/api/session':
        return inspector.session(name(query('name')));
      case '/api/diff':
        return inspector.diff(name(query('name')), query('op'));
      case '/api/blame':
        return inspector.blame(name(query('name')), query('path'));
      case '/api/patch':
        return inspector.patch(name(query('name')), url.searchParams.get('op') ?? undefined);
    }
  }
  if (request.method === 'POST') {
    if (!String(request.headers['content-type']).startsWith('application/json'))
      throw new InvalidArgumentError('an action is a JSON body (content-type application/json)');
    const body = await readBody(request);
    const field = (key: string): string => {
      const value = body[key];
      if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(`missing ${key}`);
      return value;
    };
    switch (url.pathname) {
      case '/api/restore-preview':
        return inspector.restorePreview(name(field('name')), field('snapshot'));
      case '/api/restore':
        return inspector.restore(name(field('name')), field('snapshot'));
      case '/api/fork':
        return inspector.fork(name(field('name')), field('snapshot'), sessionName(field('to'), 'the new session name'));
    }
  }
  throw new UnknownItemError(`no ${request.method ?? ''} ${url.pathname}`);
}

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).byteLength;
    if (size > MAX_BODY) throw new InvalidArgumentError('the request body is too large');
    chunks.push(chunk as Buffer);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new InvalidArgumentError('the request body is not a JSON object');
}

function answer(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  response.end(body);
}

/** A failure as JSON `{ error: { code, message } }`: its status by kind, its message without host paths. */
function answerError(response: ServerResponse, error: unknown, hostDirs: readonly string[]): void {
  const status =
    error instanceof UnknownItemError || error instanceof FileNotFoundError
      ? 404
      : error instanceof ConflictError
        ? 409
        : error instanceof InvalidArgumentError || (error instanceof Error && error.name === 'UsageError')
          ? 400
          : error instanceof WorkspaceError
            ? 422
            : 500;
  const code = error instanceof WorkspaceError ? error.code : status === 400 ? 'EINVAL' : 'EINTERNAL';
  const message = scrubHostPaths(error instanceof Error ? error.message : String(error), { hostDirs, allAbsolute: true });
  if (response.headersSent) return void response.end();
  answer(response, status, 'application/json; charset=utf-8', JSON.stringify({ error: { code, message } }));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Where the page's files are: beside the bundled command (dist/inspect), or beside this module (src or dist/src). */
function assetDir(): string {
  const here = fileURLToPath(new URL('./inspect', import.meta.url));
  if (existsSync(here)) return here;
  throw new Error('the inspector page files are missing from this installation (inspect/ beside the command)');
}
