// LangChain tools backed by a sessionfs session. A fixture AIMessage stands in for a chat model's reply
// (model.bindTools(tools).invoke(...) returns one), so this runs offline.
import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import { createSession } from 'sessionfs';
import { langchainTools } from 'sessionfs/langchain';

await using session = await createSession({ backend: 'memory' });
const tools = langchainTools(session);
const reply = new AIMessage({ content: '', tool_calls: [{ id: 't1', name: 'mkdir', args: { path: 'src/lib' }, type: 'tool_call' }] });
for (const call of reply.tool_calls ?? []) {
  const tool = tools.find((candidate) => candidate.name === call.name)!;
  const message = (await tool.invoke(call)) as ToolMessage;
  console.log(message.content, message.status);
}
if (!(await session.filesystem.exists('src/lib'))) throw new Error('the call did not run');
