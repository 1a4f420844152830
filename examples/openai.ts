// OpenAI function calling (strict mode) with sessionfs tools. A fixture `fetch` answers like the API would,
// so this runs offline; drop the `fetch` option (and set OPENAI_API_KEY) to talk to the real API.
import OpenAI from 'openai';
import { createSession } from 'sessionfs';
import { openaiTools } from 'sessionfs/openai';

const reply = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-4.1',
  choices: [
    {
      index: 0,
      finish_reason: 'tool_calls',
      logprobs: null,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'write_file', arguments: JSON.stringify({ path: 'notes.md', content: '# notes\n', mode: null }) },
          },
        ],
      },
    },
  ],
};
const client = new OpenAI({
  apiKey: 'offline',
  fetch: async () => new Response(JSON.stringify(reply), { headers: { 'content-type': 'application/json' } }),
});

await using session = await createSession({ backend: 'memory' });
const adapter = openaiTools(session); // strict: true by default
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Start a notes file' }];
const response = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools: adapter.chatTools });
const message = response.choices[0]!.message;
messages.push(message, ...(await adapter.handleToolCalls(message.tool_calls)));
console.log(messages.at(-1));
if (!(await session.filesystem.exists('notes.md'))) throw new Error('the call did not run');
