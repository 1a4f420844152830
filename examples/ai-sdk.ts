// The Vercel AI SDK driving sessionfs tools. MockLanguageModelV3 (from 'ai/test') stands in for a provider
// model so this runs offline; with a real one, pass e.g. openai('gpt-4.1') as `model`.
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createSession } from 'sessionfs';
import { aiSdkTools } from 'sessionfs/ai-sdk';

await using session = await createSession({ backend: 'memory' });
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
let turn = 0;
const model = new MockLanguageModelV3({
  doGenerate: async () =>
    turn++ === 0
      ? {
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'write_file', input: JSON.stringify({ path: 'hello.txt', content: 'hi\n' }) },
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        }
      : { content: [{ type: 'text', text: 'Wrote hello.txt.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
});

const result = await generateText({ model, tools: aiSdkTools(session), prompt: 'Write hello.txt', stopWhen: stepCountIs(3) });
console.log(result.text, (await session.filesystem.read('hello.txt')).content);
if (result.text !== 'Wrote hello.txt.') throw new Error('unexpected answer');
