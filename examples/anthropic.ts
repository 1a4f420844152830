// Claude's Messages API with sessionfs tools: tool_use blocks in, tool_result blocks out. A fixture `fetch`
// answers like the API would, so this runs offline; drop it (and set ANTHROPIC_API_KEY) for the real API.
import Anthropic from '@anthropic-ai/sdk';
import { createSession } from 'sessionfs';
import { anthropicTools } from 'sessionfs/anthropic';

const reply = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
  content: [{ type: 'tool_use', id: 'tu_1', name: 'edit_file', input: { path: 'todo.md', old_string: 'nothing here', new_string: 'x' } }],
};
const client = new Anthropic({
  apiKey: 'offline',
  fetch: async () => new Response(JSON.stringify(reply), { headers: { 'content-type': 'application/json' } }),
});

await using session = await createSession({ backend: 'memory' });
await session.filesystem.write('todo.md', '- ship\n');
const adapter = anthropicTools(session);
const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Fix todo.md' }];
const response = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, tools: adapter.tools, messages });
messages.push({ role: 'assistant', content: response.content });
const results = await adapter.handleToolUse(response.content); // the failed edit is rolled back: is_error true
messages.push({ role: 'user', content: results });
console.log(results);
if (results[0]?.is_error !== true) throw new Error('expected a failed, rolled-back edit');
