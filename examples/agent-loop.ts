// A whole agent loop with the OpenAI SDK: the model reads a file, makes an edit that fails (rolled back, and
// it reads the error), fixes it, and answers. A scripted `fetch` plays the model, so this runs offline;
// drop the `fetch` option (and set OPENAI_API_KEY) to run the same loop against the real API.
// Run it: npm run example -- agent-loop
import OpenAI from 'openai';
import { createSession } from 'sessionfs';
import { openaiTools } from 'sessionfs/openai';

type Call = { name: string; args: Record<string, unknown> };
const script: (Call | string)[] = [
  { name: 'read_file', args: { path: 'src/greet.ts', offset: null, limit: null } },
  { name: 'edit_file', args: { path: 'src/greet.ts', old_string: 'Bonjour', new_string: 'Hi', replace_all: null } },
  { name: 'edit_file', args: { path: 'src/greet.ts', old_string: 'Hello', new_string: 'Hi', replace_all: null } },
  'greet() now says "Hi".',
];
let turn = 0;
const scriptedModel: typeof fetch = async () => {
  const step = script[turn++]!;
  const message =
    typeof step === 'string'
      ? { role: 'assistant', content: step, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: `call_${turn}`, type: 'function', function: { name: step.name, arguments: JSON.stringify(step.args) } }],
        };
  const body = {
    id: `chatcmpl-${turn}`,
    object: 'chat.completion',
    created: 0,
    model: 'gpt-4.1',
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message }],
  };
  return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
};

const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'offline', fetch: scriptedModel });
const session = await createSession({ backend: 'memory' });
try {
  await session.filesystem.write('src/greet.ts', 'export const greet = (name: string) => `Hello, ${name}!`;\n');
  const adapter = openaiTools(session);
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Make greet() say "Hi" instead of "Hello".' }];
  for (let step = 0; step < 10; step++) {
    const response = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools: adapter.chatTools });
    const message = response.choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) {
      console.log(`model: ${message.content}`);
      break;
    }
    for (const result of await adapter.handleToolCalls(message.tool_calls)) {
      console.log(`tool: ${result.content.split('\n')[0]}`);
      messages.push(result);
    }
  }
  for (const call of session.calls)
    console.log(`${call.tool}: ${call.result.success ? 'ok' : 'failed'}${call.result.rolledBack ? ', rolled back' : ''}`);
  const { content } = await session.filesystem.read('src/greet.ts');
  console.log(content);
  if (!content.includes('Hi, ${name}') || !session.calls[1]?.result.rolledBack) throw new Error('the loop did not end as scripted');
} finally {
  await session.dispose();
}
