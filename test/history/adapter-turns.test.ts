import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { aiSdkTools } from '../../src/adapters/ai-sdk.js';
import { anthropicTools } from '../../src/adapters/anthropic.js';
import { openaiTools } from '../../src/adapters/openai.js';
import { createSession } from '../../src/index.js';
import { contentsOf } from '../../src/testing/harness.js';

const write = (path: string, content: string) => ({ path, content });

describe('adapters open one turn per model response', () => {
  it('anthropic: each handleToolUse is a turn; undo undoes the last response', async () => {
    await using session = await createSession({ backend: 'memory' });
    const adapter = anthropicTools(session);
    await adapter.handleToolUse([
      { type: 'tool_use', id: 't1', name: 'write_file', input: write('a.txt', 'one') },
      { type: 'tool_use', id: 't2', name: 'write_file', input: write('b.txt', 'two') },
    ]);
    await adapter.handleToolUse([{ type: 'text' }, { type: 'tool_use', id: 't3', name: 'write_file', input: write('a.txt', 'uno') }]);
    // A response without tool calls opens no turn.
    await adapter.handleToolUse([{ type: 'text' }]);
    const history = await session.history();
    expect(history.turns.map((turn) => turn.operations.map((op) => op.summary))).toEqual([
      ['path="a.txt" content=<3 chars>', 'path="b.txt" content=<3 chars>'],
      ['path="a.txt" content=<3 chars>'],
    ]);
    await session.undo();
    expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'one', 'b.txt': 'two' });
  });

  it('openai: handleToolCalls and handleFunctionCalls are a turn each', async () => {
    await using session = await createSession({ backend: 'memory' });
    const adapter = openaiTools(session);
    await adapter.handleToolCalls([
      { id: 'c1', type: 'function', function: { name: 'write_file', arguments: JSON.stringify(write('a.txt', 'one')) } },
      { id: 'c2', type: 'function', function: { name: 'write_file', arguments: JSON.stringify(write('b.txt', 'two')) } },
    ]);
    await adapter.handleFunctionCalls([
      { type: 'function_call', call_id: 'c3', name: 'delete', arguments: JSON.stringify({ path: 'a.txt' }) },
    ]);
    const history = await session.history();
    expect(history.turns.map((turn) => turn.operations.length)).toEqual([2, 1]);
    await session.undo();
    await session.undo();
    expect(await contentsOf(session.filesystem)).toEqual({});
  });

  it('ai-sdk: the calls of one step are one turn, the next step another', async () => {
    await using session = await createSession({ backend: 'memory' });
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 1, text: 1, reasoning: undefined },
    };
    const steps = [[write('a.txt', 'one'), write('b.txt', 'two')], [write('a.txt', 'uno')]];
    let step = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const calls = steps[step] ?? [];
        step += 1;
        return {
          content: calls.map((input, index) => ({
            type: 'tool-call' as const,
            toolCallId: `s${step}c${index}`,
            toolName: 'write_file',
            input: JSON.stringify(input),
          })),
          finishReason: { unified: 'tool-calls' as const, raw: undefined },
          usage,
          warnings: [],
        };
      },
    });
    await generateText({ model, tools: aiSdkTools(session), prompt: 'go', stopWhen: stepCountIs(2) });
    const history = await session.history();
    expect(history.turns.map((turn) => turn.operations.length)).toEqual([2, 1]);
    await session.undo();
    expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'one', 'b.txt': 'two' });
  });
});
