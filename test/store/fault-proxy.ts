import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** What the proxy does to the next requests: answer an error status, reset the connection, or never answer. */
export type Fault = { kind: 'status'; status: 500 | 503 } | { kind: 'reset' } | { kind: 'hang' };

/**
 * An HTTP proxy in front of s3rver that the test controls: `fail(fault, n)` applies the fault to the next
 * `n` requests (`Infinity`: until `heal()`), then forwards again. Counts what it forwarded and what it failed.
 */
export interface FaultProxy {
  endpoint: string;
  fail(fault: Fault, count: number): void;
  heal(): void;
  readonly failed: number;
  readonly forwarded: number;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const { hostname, port } = new URL(target);
  let fault: Fault | undefined;
  let remaining = 0;
  let failed = 0;
  let forwarded = 0;
  const sockets = new Set<Socket>();
  const forward = (incoming: IncomingMessage, response: ServerResponse): void => {
    forwarded += 1;
    const outgoing = request({ hostname, port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    outgoing.on('error', () => response.destroy());
    incoming.pipe(outgoing);
  };
  const server: Server = createServer((incoming, response) => {
    if (fault === undefined || remaining <= 0) return forward(incoming, response);
    remaining -= 1;
    failed += 1;
    const current = fault;
    incoming.resume();
    if (current.kind === 'reset') return incoming.socket.destroy();
    if (current.kind === 'hang') return; // never answers; closed with the proxy
    const code = current.status === 503 ? 'ServiceUnavailable' : 'InternalError';
    response.writeHead(current.status, { 'content-type': 'application/xml' });
    response.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message></Error>`);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    fail(next, count) {
      fault = next;
      remaining = count;
    },
    heal() {
      remaining = 0;
      for (const socket of sockets) socket.destroy(); // requests left hanging end now
    },
    get failed() {
      return failed;
    },
    get forwarded() {
      return forwarded;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
