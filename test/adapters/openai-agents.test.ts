import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { openaiAgentsTools } from '../../src/adapters/openai-agents.js';
import { createSession } from '../../src/index.js';
import { startFakeModel, type ModelRequest, type ModelReply } from '../support/fake-model-server.js';

const GREET = 'export const greet = (name: string) => `Hello, ${name}!`;\n';

/** A Responses API response whose output is `output`. */
function response(id: string, output: unknown[]): ModelReply {
  return {
    json: {
      id,
      object: 'response',
      created_at: 0,
      status: 'completed',
      model: 'gpt-fake',
      output,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      usage: {
        input_tokens: 1,
        output_tokens: 1,
        total_tokens: 2,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    },
  };
}
const call = (id: string, name: string, args: unknown) => ({
  type: 'function_call',
  id: `fc_${id}`,
  call_id: `call_${id}`,
  name,
  arguments: JSON.stringify(args),
  status: 'completed',
});

/** The `function_call_output` items the model was sent, by call id. */
function outputs(request: ModelRequest): Record<string, string> {
  const input = request.body.input as { type?: string; call_id?: string; output?: unknown }[];
  const found: Record<string, string> = {};
  for (const item of input)
    if (item.type === 'function_call_output')
      found[item.call_id!] = typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
  return found;
}

describe('sessionfs/openai-agents with Runner and a fake Responses API', () => {
  it('reads, fails an edit (rolled back, the model sees the error), fixes it, answers', async () => {
    setTracingDisabled(true);
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('src/greet.ts', GREET);
    const steps = [
      [call('read', 'read_file', { path: 'src/greet.ts', offset: null, limit: null })],
      [call('edit1', 'edit_file', { path: 'src/greet.ts', old_string: 'Bonjour', new_string: 'Hi', replace_all: null })],
      [call('edit2', 'edit_file', { path: 'src/greet.ts', old_string: 'Hello', new_string: 'Hi', replace_all: null })],
      [
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'greet now says Hi.', annotations: [] }],
        },
      ],
    ];
    await using model = await startFakeModel(
      (path) => path === '/v1/responses',
      (_request, turn) => response(`resp_${turn}`, steps[turn]!),
    );
    const tools = openaiAgentsTools(session);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'edit_file', 'write_file', 'grep']));
    const agent = new Agent({ name: 'editor', instructions: 'Edit the workspace.', model: 'gpt-fake', tools });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ apiKey: 'sk-offline', baseURL: `${model.url}/v1`, useResponses: true }),
      tracingDisabled: true,
    });
    const result = await runner.run(agent, 'Make greet say Hi');

    expect(result.finalOutput).toBe('greet now says Hi.');
    expect(model.requests).toHaveLength(4);
    const sentTools = model.requests[0]!.body.tools as { name: string; strict: boolean; parameters: { additionalProperties: boolean } }[];
    expect(sentTools.find((t) => t.name === 'edit_file')).toMatchObject({ strict: true, parameters: { additionalProperties: false } });
    expect(outputs(model.requests[1]!).call_read).toContain('Hello, ${name}!');
    expect(outputs(model.requests[2]!).call_edit1).toMatch(
      /^Error \[EINVAL\]: old_string was not found in src\/greet.ts[\s\S]*rolled back/,
    );
    expect(outputs(model.requests[3]!).call_edit2).not.toMatch(/^Error/);
    expect((await session.filesystem.read('src/greet.ts')).content).toBe('export const greet = (name: string) => `Hi, ${name}!`;');
    expect(session.calls.map((r) => [r.tool, r.result.success, r.result.rolledBack])).toEqual([
      ['read_file', true, false],
      ['edit_file', false, true],
      ['edit_file', true, false],
    ]);
  });

  it('arguments the schema would refuse still reach runTool, which names the problem', async () => {
    await using session = await createSession({ backend: 'memory' });
    const write = openaiAgentsTools(session).find((t) => t.name === 'write_file')!;
    const { RunContext } = await import('@openai/agents');
    const out = await write.invoke(new RunContext(), JSON.stringify({ path: 'a.txt', content: 'x', colour: 'red' }));
    expect(String(out)).toMatch(/^Error \[EINVAL\]: invalid parameters for write_file: unknown parameter "colour"/);
    expect(await session.filesystem.exists('a.txt')).toBe(false);
  });
});
