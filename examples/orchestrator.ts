// An orchestrator loop without any SDK: one session per task, tool calls from a (scripted) model, every
// failed call rolled back, and a checkpoint the orchestrator can return to.
import { createSession, workspaceTools } from 'sessionfs';

const script = [
  { name: 'write_file', arguments: { path: 'src/a.ts', content: 'export const a = 1;\n' } },
  { name: 'write_file', arguments: { path: 'src/b.ts', content: 'export const b = 2;\n' } },
  { name: 'edit_file', arguments: { path: 'src/a.ts', old_string: 'const z', new_string: 'x' } }, // fails: rolled back
  { name: 'delete', arguments: { path: 'src/b.ts' } },
];

await using session = await createSession({ backend: 'memory' });
const tools = new Map<string, ReturnType<typeof workspaceTools>[number]>(workspaceTools().map((tool) => [tool.name, tool]));
for (const call of script) {
  const result = await session.runTool(tools.get(call.name)!, call.arguments);
  console.log(`${call.name}: ${result.success ? 'ok' : `failed (${result.code}), rolled back: ${result.rolledBack}`}`);
}
// The orchestrator decides the delete was wrong: back to the snapshot taken before it.
await session.rollbackTo(session.snapshots.at(-1)!);
console.log(await session.filesystem.glob('**/*.ts'));
if (!(await session.filesystem.exists('src/b.ts'))) throw new Error('rollbackTo did not restore src/b.ts');
