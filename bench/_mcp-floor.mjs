#!/usr/bin/env node
// The floor of a read over MCP, for bench/mcp-calls.mjs: a JSON-RPC server over stdio with no protocol
// library, no validation and no checks, answering `read_file` with the file's lines numbered as sessionfs
// shows them (the same bytes on the wire), read from the host tree with one synchronous call. What is left
// of a call here is the stdio transport and the client. Not a usable server.
// Usage: node bench/_mcp-floor.mjs <tree>   (paths arrive as `tree/<path>`)
import * as fs from 'node:fs';

const root = process.argv[2];
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
    const message = JSON.parse(pending.slice(0, end));
    pending = pending.slice(end + 1);
    if (message.id !== undefined) process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: answer(message) })}\n`);
  }
});

function answer({ method, params }) {
  if (method === 'initialize')
    return { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '0' } };
  if (method !== 'tools/call') return {};
  const text = fs.readFileSync(`${root}/${params.arguments.path.replace(/^tree\//, '')}`, 'utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return { content: [{ type: 'text', text: lines.map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join('\n') }], isError: false };
}
