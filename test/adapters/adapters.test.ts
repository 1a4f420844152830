import Anthropic from '@anthropic-ai/sdk';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { aiSdkTools } from '../../src/adapters/ai-sdk.js';
import { anthropicTools } from '../../src/adapters/anthropic.js';
import { langchainTools } from '../../src/adapters/langchain.js';
import { openaiTools } from '../../src/adapters/openai.js';
import { ToolCallFailedError } from '../../src/adapters/shared.js';
import { createSession } from '../../src/index.js';
import { WORKSPACE_TOOL_NAMES } from '../../src/entries/tools.js';

/** A fetch that answers every request with `body` (no network), recording what the SDK sent. */
function fixtureFetch(body: unknown, sent: unknown[]): typeof fetch {
  return async (_url, init) => {
    sent.push(JSON.parse(String(init?.body)));
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

async function sessionWithFile() {
  const session = await createSession({ backend: 'memory' });
  await session.filesystem.write('a.txt', 'one\n');
  return session;
}

describe('sessionfs/ai-sdk with the AI SDK and its MockLanguageModelV3', () => {
  it('a model-issued call reaches session.runTool; a failure is rolled back and comes back as a tool-error', async () => {
    await using session = await sessionWithFile();
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 1, text: 1, reasoning: undefined },
    };
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [
          { type: 'tool-call', toolCallId: 'c1', toolName: 'write_file', input: JSON.stringify({ path: 'b.txt', content: 'two\n' }) },
          {
            type: 'tool-call',
            toolCallId: 'c2',
            toolName: 'edit_file',
            input: JSON.stringify({ path: 'a.txt', old_string: 'missing', new_string: 'x' }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      }),
    });
    const result = await generateText({ model, tools: aiSdkTools(session), prompt: 'go', stopWhen: stepCountIs(1) });
    const parts = result.steps[0]!.content;
    expect(parts.find((p) => p.type === 'tool-result')).toMatchObject({ toolCallId: 'c1', output: 'Created b.txt (4 bytes).' });
    const error = parts.find((p) => p.type === 'tool-error');
    expect(error).toMatchObject({ toolCallId: 'c2', toolName: 'edit_file' });
    expect((error as { error: unknown }).error).toBeInstanceOf(ToolCallFailedError);
    expect(String((error as { error: Error }).error.message)).toMatch(/^Error \[ENOENT\]|^Error \[E[A-Z]+\]/);
    expect(session.calls.map((h) => [h.tool, h.result.success, h.result.rolledBack])).toEqual([
      ['write_file', true, false],
      ['edit_file', false, true],
    ]);
    expect(await session.filesystem.read('b.txt')).toMatchObject({ content: 'two' });
    // The model saw the tools' JSON Schemas.
    const call = model.doGenerateCalls[0]!;
    expect(call.tools?.map((t) => t.name)).toEqual([...WORKSPACE_TOOL_NAMES]);
  });
});

describe('sessionfs/openai with the OpenAI SDK on fixture responses', () => {
  it('Chat Completions: tool calls run through runTool, strict schemas are sent, a failure is rolled back into an Error [CODE] tool message', async () => {
    await using session = await sessionWithFile();
    const sent: unknown[] = [];
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 0,
      model: 'gpt-test',
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
                function: { name: 'read_file', arguments: JSON.stringify({ path: 'a.txt', offset: null, limit: null }) },
              },
              {
                id: 'call_2',
                type: 'function',
                function: { name: 'write_file', arguments: JSON.stringify({ path: 'a.txt', content: 'x', mode: 'create' }) },
              },
              { id: 'call_3', type: 'function', function: { name: 'write_file', arguments: '{not json' } },
            ],
          },
        },
      ],
    };
    const client = new OpenAI({ apiKey: 'test', fetch: fixtureFetch(completion, sent), maxRetries: 0 });
    const adapter = openaiTools(session);
    const response = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'go' }],
      tools: adapter.chatTools,
    });
    const messages = await adapter.handleToolCalls(response.choices[0]!.message.tool_calls);
    expect(messages.map((m) => m.tool_call_id)).toEqual(['call_1', 'call_2', 'call_3']);
    expect(messages[0]!.content).toContain('one');
    expect(messages[1]!.content).toMatch(/^Error \[EEXIST\]/);
    expect(messages[2]!.content).toMatch(/^Error \[EINVAL\].*not valid JSON/);
    const request = sent[0] as { tools: { function: { strict: boolean; parameters: { additionalProperties: boolean } } }[] };
    expect(request.tools[0]!.function).toMatchObject({ strict: true, parameters: { additionalProperties: false } });
    // The follow-up request type-checks with the SDK's own message types.
    const next: OpenAI.ChatCompletionMessageParam[] = [...messages];
    expect(next).toHaveLength(3);
    expect(await session.filesystem.read('a.txt')).toMatchObject({ content: 'one' });
  });

  it('Responses API: function_call items become function_call_output items', async () => {
    await using session = await sessionWithFile();
    const adapter = openaiTools(session, { strict: false });
    const items = await adapter.handleFunctionCalls([
      { type: 'function_call', call_id: 'fc_1', name: 'stat', arguments: '{"path":"a.txt"}' },
      { type: 'message' },
    ]);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'function_call_output', call_id: 'fc_1' });
    const typed: OpenAI.Responses.ResponseInputItem[] = items;
    expect(typed).toHaveLength(1);
    const tools: OpenAI.Responses.FunctionTool[] = adapter.responsesTools;
    expect(tools[0]!.strict).toBe(false);
  });

  it('Responses API: handleFunctionCalls takes response.output as the SDK types it (items whose call_id is null included)', async () => {
    await using session = await sessionWithFile();
    const body = {
      id: 'resp_1',
      object: 'response',
      created_at: 0,
      model: 'gpt-test',
      status: 'completed',
      output: [
        { type: 'tool_search_call', id: 'ts_1', call_id: null, arguments: {}, execution: 'server', status: 'completed' },
        {
          type: 'function_call',
          id: 'fc_item',
          call_id: 'fc_1',
          name: 'read_file',
          arguments: '{"path":"a.txt","offset":null,"limit":null}',
        },
      ],
    };
    const client = new OpenAI({ apiKey: 'test', fetch: fixtureFetch(body, []), maxRetries: 0 });
    const adapter = openaiTools(session);
    const response = await client.responses.create({ model: 'gpt-test', input: 'go', tools: adapter.responsesTools });
    // The point is that this line type-checks against the SDK's own `ResponseOutputItem[]`.
    const items: OpenAI.Responses.ResponseInputItem[] = await adapter.handleFunctionCalls(response.output);
    expect(items).toEqual([{ type: 'function_call_output', call_id: 'fc_1', output: expect.stringContaining('one') }]);
  });
});

describe('sessionfs/anthropic with the Anthropic SDK on a fixture response', () => {
  it('tool_use blocks become tool_result blocks; a failure is rolled back with is_error', async () => {
    await using session = await sessionWithFile();
    const sent: unknown[] = [];
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
      content: [
        { type: 'text', text: 'editing' },
        { type: 'tool_use', id: 'tu_1', name: 'edit_file', input: { path: 'a.txt', old_string: 'one', new_string: 'uno' } },
        { type: 'tool_use', id: 'tu_2', name: 'delete', input: { path: 'nope' } },
        { type: 'tool_use', id: 'tu_3', name: 'no_such_tool', input: {} },
      ],
    };
    const client = new Anthropic({ apiKey: 'test', fetch: fixtureFetch(message, sent), maxRetries: 0 });
    const adapter = anthropicTools(session);
    const response = await client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'go' }],
      tools: adapter.tools,
    });
    const results = await adapter.handleToolUse(response.content);
    expect(results.map((r) => [r.tool_use_id, r.is_error])).toEqual([
      ['tu_1', false],
      ['tu_2', true],
      ['tu_3', true],
    ]);
    expect(results[1]!.content).toMatch(/^Error \[ENOENT\]/);
    expect(results[2]!.content).toContain('Available tools:');
    const typed: Anthropic.ToolResultBlockParam[] = results;
    expect(typed).toHaveLength(3);
    expect((sent[0] as { tools: { input_schema: unknown }[] }).tools[0]!.input_schema).toMatchObject({ type: 'object' });
    expect(await session.filesystem.read('a.txt')).toMatchObject({ content: 'uno' });
    expect(session.calls.at(-1)?.result).toMatchObject({ success: false, rolledBack: true });
  });
});

describe('sessionfs/langchain with @langchain/core tools and a fixture AIMessage', () => {
  it('tool calls of an AIMessage run through runTool; a failure comes back as a ToolMessage with status error', async () => {
    await using session = await sessionWithFile();
    const tools = langchainTools(session);
    const byName = new Map(tools.map((t) => [t.name, t]));
    const ai = new AIMessage({
      content: '',
      tool_calls: [
        { id: 't1', name: 'write_file', args: { path: 'c.txt', content: 'three\n' }, type: 'tool_call' },
        { id: 't2', name: 'move', args: { source: 'missing', destination: 'x' }, type: 'tool_call' },
      ],
    });
    const outputs: ToolMessage[] = [];
    for (const call of ai.tool_calls ?? []) outputs.push((await byName.get(call.name)!.invoke(call)) as ToolMessage);
    expect(outputs[0]).toBeInstanceOf(ToolMessage);
    expect(outputs[0]!.status).not.toBe('error');
    expect(outputs[1]).toMatchObject({ status: 'error', tool_call_id: 't2' });
    expect(String(outputs[1]!.content)).toMatch(/^Error \[ENOENT\]/);
    expect(session.calls.map((h) => h.result.rolledBack)).toEqual([false, true]);
    // Plain-argument invocation throws the typed error.
    await expect(byName.get('delete')!.invoke({ path: 'missing' })).rejects.toBeInstanceOf(ToolCallFailedError);
  });

  it('null optional arguments are accepted as absent, as runTool does (LangChain checks the schema first)', async () => {
    await using session = await sessionWithFile();
    const byName = new Map(langchainTools(session).map((t) => [t.name, t]));
    const call = { id: 't1', name: 'read_file', args: { path: 'a.txt', offset: null, limit: null }, type: 'tool_call' as const };
    const message = (await byName.get('read_file')!.invoke(call)) as ToolMessage;
    expect(message.status).not.toBe('error');
    expect(String(message.content)).toContain('one');
    const written = await byName.get('write_file')!.invoke({ path: 'b.txt', content: 'two\n', mode: null });
    expect(written).toMatch(/b\.txt/);
    expect((await session.filesystem.read('b.txt')).content).toContain('two');
  });

  it('arguments that do not fit the schema come back as an error ToolMessage (EINVAL, nothing run), not a throw', async () => {
    await using session = await sessionWithFile();
    const byName = new Map(langchainTools(session).map((t) => [t.name, t]));
    const call = { id: 't9', name: 'write_file', args: { path: 5, content: 'x' }, type: 'tool_call' as const };
    const message = (await byName.get('write_file')!.invoke(call)) as ToolMessage;
    expect(message).toBeInstanceOf(ToolMessage);
    expect(message).toMatchObject({ status: 'error', tool_call_id: 't9', name: 'write_file' });
    expect(String(message.content)).toMatch(/^Error \[EINVAL\]: invalid parameters for write_file/);
    expect(session.calls.at(-1)?.result).toMatchObject({ success: false, code: 'EINVAL', rolledBack: false });
    // With plain arguments (no tool call to answer) the failure is thrown, typed, as for any failed call.
    await expect(byName.get('write_file')!.invoke({ path: 5, content: 'x' } as never)).rejects.toMatchObject({
      name: 'ToolCallFailedError',
      code: 'EINVAL',
    });
  });
});
