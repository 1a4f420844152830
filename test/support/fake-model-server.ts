import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake model received. */
export interface ModelRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

/** What the fake answers: a JSON body, or server-sent events (`[event, data]` pairs). */
export type ModelReply = { json: unknown; status?: number } | { events: [string, unknown][] };

export interface FakeModelServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The model requests received (what `answer` was asked), in order. */
  readonly requests: ModelRequest[];
  close(): Promise<void>;
}

/**
 * A local HTTP server that plays the model: every POST whose path `isModelCall` accepts is answered by
 * `answer(request, turn)` (turn counts those calls from 0); anything else gets `{}` (404). On 127.0.0.1 only,
 * no network: the SDKs under test talk to it through their base-URL setting.
 */
export async function startFakeModel(
  isModelCall: (path: string) => boolean,
  answer: (request: ModelRequest, turn: number) => ModelReply,
): Promise<FakeModelServer> {
  const requests: ModelRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (req.method !== 'POST' || !isModelCall(path)) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      const request: ModelRequest = { method: req.method, path, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
      requests.push(request);
      let reply: ModelReply;
      try {
        reply = answer(request, requests.length - 1);
      } catch (error) {
        reply = { status: 500, json: { error: { type: 'fake_model_error', message: String(error) } } };
      }
      if ('events' in reply) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const [event, data] of reply.events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        res.end();
      } else {
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close, [Symbol.asyncDispose]: close };
}

/** An Anthropic Messages API reply with `content` blocks, streamed as the API streams it. */
export function anthropicStream(
  id: string,
  model: string,
  content: ({ type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown })[],
): ModelReply {
  const stop = content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 1, output_tokens: 1 };
  const events: [string, unknown][] = [
    [
      'message_start',
      {
        type: 'message_start',
        message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage },
      },
    ],
  ];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
      ]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return { events };
}
