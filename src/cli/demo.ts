import { mkdtemp, mkdir, rm, writeFile, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { createSession, defineTool, type HydratedSession } from '../session/index.js';
import type { ToolCallResult, ToolDefinition } from '../session/types.js';
import { type WorkspaceToolName } from '../tools/index.js';
import { workspaceTools } from '../shell/index.js';
import { scrubHostPaths } from '../session/scrub.js';

/** The tiny project the demo generates on the host, then mounts. */
export const PROJECT: Readonly<Record<string, string>> = {
  'package.json': '{\n  "name": "acme-greeter",\n  "version": "1.0.0",\n  "type": "module"\n}\n',
  'README.md': '# acme-greeter\n\nCall `greet(name)` to build a greeting.\n',
  'src/greet.ts': 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n',
  'src/main.ts': 'import { greet } from "./greet.js";\n\nconsole.log(greet("world"));\n',
  'test/greet.test.ts':
    'import { greet } from "../src/greet.js";\n\nif (greet("Ada") !== "Hello, Ada!") throw new Error("greet is broken");\n',
};

type Print = (line?: string) => void;

/** The lines that frame the patch in the demo's output (a test cuts it out between them and applies it). */
export const PATCH_START = '----- patch -----';
export const PATCH_END = '----- end of patch -----';

/**
 * `sessionfs demo`: a scripted agent session on the in-memory backend, narrated. It hydrates a small
 * project from a temporary host directory (allow-listed), runs tool calls as a model would, shows one
 * multi-file call that fails half way and is rolled back, snapshots, prints the final diff and ends with the
 * session's git patch (deterministic: the same every run). No host path is ever printed.
 */
export async function runDemo(out: Print = (line = '') => process.stdout.write(`${line}\n`)): Promise<void> {
  const hostDir = await realpath(await mkdtemp(join(tmpdir(), 'sessionfs-demo-')));
  const print: Print = (line = '') => out(scrubHostPaths(line, { hostDirs: [hostDir] }));
  let session: HydratedSession | undefined;
  try {
    const projectDir = join(hostDir, 'acme-greeter');
    for (const [path, content] of Object.entries(PROJECT)) {
      await mkdir(dirname(join(projectDir, path)), { recursive: true });
      await writeFile(join(projectDir, path), content);
    }

    print('sessionfs demo: one agent session in a virtual workspace');
    print('=========================================================');
    print();
    print('1. Mount a host project');
    print(`   A small project (${Object.keys(PROJECT).length} files) was generated in a temporary host directory, the only one allowed.`);
    print("   createSession({ backend: 'memory', sources: [{ hostPath: <tmp>/acme-greeter, path: 'app' }], allowedHostRoots: [<tmp>] })");
    session = await createSession({ backend: 'memory', sources: [{ hostPath: projectDir, path: 'app' }], allowedHostRoots: [hostDir] });
    const hydrated = session.hydration;
    print(
      `   -> session ${session.id.slice(0, 8)}: ${hydrated?.files ?? 0} files (${hydrated?.bytes ?? 0} bytes) hydrated under /app, in memory. The host copy is never touched.`,
    );
    const baseline = await session.filesystem.snapshot({ tag: 'hydrated' });
    print();

    const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
    const active = session;
    const call = async (
      name: WorkspaceToolName | ToolDefinition<z.ZodType>,
      params: Record<string, unknown>,
      maxLines = 8,
    ): Promise<ToolCallResult> => {
      const tool = typeof name === 'string' ? tools.get(name) : name;
      if (tool === undefined) throw new Error(`no tool ${String(name)}`);
      print(`   > ${tool.name} ${JSON.stringify(params)}`);
      const result = await active.runTool(tool, params);
      const mark = result.success
        ? 'ok'
        : `FAILED${result.code === undefined ? '' : ` (${result.code})`}${result.rolledBack ? ', rolled back' : ''}`;
      const lines = result.message.split('\n');
      const shown = lines.slice(0, maxLines);
      if (lines.length > maxLines) shown.push(`... (${lines.length - maxLines} more lines)`);
      if (shown.length === 1) print(`     [${mark}] ${shown[0] ?? ''}`);
      else {
        print(`     [${mark}]`);
        for (const line of shown) print(`       ${line}`);
      }
      return result;
    };

    print('2. The agent explores (task: "rename greet() to welcome() everywhere and add a test")');
    await call('list_directory', { path: 'app' });
    await call('grep', { pattern: '\\bgreet\\b', path: 'app' });
    await call('read_file', { path: 'app/src/greet.ts' });
    print();

    print('3. The agent edits');
    await call('edit_file', { path: 'app/src/greet.ts', old_string: 'export function greet(', new_string: 'export function welcome(' });
    print('   A model-sized mistake: "greet" occurs three times in main.ts, so an edit without context is refused:');
    await call('edit_file', { path: 'app/src/main.ts', old_string: 'greet', new_string: 'welcome' });
    await call('edit_file', { path: 'app/src/main.ts', old_string: 'greet', new_string: 'welcome', replace_all: true });
    print('   replace_all also rewrote the import path "./greet.js", so the module is renamed to match:');
    await call('move', { source: 'app/src/greet.ts', destination: 'app/src/welcome.ts' });
    print();

    print('4. A multi-file call fails half way and is rolled back');
    print('   The agent calls a custom apply_patch tool (defined with defineTool) whose second edit is stale:');
    const applyPatch = defineTool({
      name: 'apply_patch',
      description: 'Apply several exact-text edits in order; fails if any of them does not apply.',
      parameters: z.object({ edits: z.array(z.object({ path: z.string(), old_string: z.string(), new_string: z.string() })).min(1) }),
      handler: async ({ edits }, context) => {
        const edit = tools.get('edit_file');
        if (edit === undefined) throw new Error('edit_file missing');
        for (const [index, step] of edits.entries()) {
          const result = await edit.handler(step, context);
          if (!result.success)
            return { success: false, message: `edit ${index + 1} of ${edits.length} failed: ${result.message}`, value: result.value };
        }
        return { success: true, message: `applied ${edits.length} edits` };
      },
    });
    await call(applyPatch, {
      edits: [
        { path: 'app/README.md', old_string: '`greet(name)`', new_string: '`welcome(name)`' },
        { path: 'app/test/greet.test.ts', old_string: 'greet("Bob")', new_string: 'welcome("Bob")' },
      ],
    });
    print('   The first edit had already changed README.md; the rollback undid it:');
    await call('grep', { pattern: 'greet|welcome', path: 'app/README.md' });
    print('   The agent reads the file again (the rollback changed it back) and retries with a fixed patch:');
    await call('read_file', { path: 'app/README.md' }, 1);
    await call(applyPatch, {
      edits: [
        { path: 'app/README.md', old_string: '`greet(name)`', new_string: '`welcome(name)`' },
        {
          path: 'app/test/greet.test.ts',
          old_string: 'import { greet } from "../src/greet.js"',
          new_string: 'import { welcome } from "../src/welcome.js"',
        },
        { path: 'app/test/greet.test.ts', old_string: 'greet("Ada")', new_string: 'welcome("Ada")' },
      ],
    });
    await call('move', { source: 'app/test/greet.test.ts', destination: 'app/test/welcome.test.ts' });
    await call('write_file', {
      path: 'app/test/unicode.test.ts',
      content:
        'import { welcome } from "../src/welcome.js";\n\nif (welcome("Zoë") !== "Hello, Zoë!") throw new Error("welcome mangles names");\n',
    });
    print('   An attempt to leave the workspace is refused, and nothing leaks about the host:');
    await call('read_file', { path: '../../etc/passwd' });
    print();

    print('5. Snapshot and diff');
    const done = await session.filesystem.snapshot({ tag: 'task-done' });
    print(`   snapshot({ tag: 'task-done' }) -> id ${done.id.slice(0, 8)}, taken ${done.createdAt}`);
    const diff = await session.filesystem.diff(baseline, done);
    print(`   diff(hydrated, task-done): ${diff.length} files changed`);
    for (const entry of diff) print(`     ${entry.status.padEnd(8)} ${entry.path}`);
    print();

    const failed = session.calls.filter((record) => !record.result.success).length;
    const rolledBack = session.calls.filter((record) => record.result.rolledBack).length;
    print(
      `Session summary: ${session.calls.length} tool calls, ${failed} failed, ${rolledBack} rolled back, ${session.snapshots.length} pre-call snapshots kept.`,
    );
    print();

    print('6. The work as a git patch: patch(hydrated), what `git apply --binary` applies to the project');
    print(PATCH_START);
    for (const line of (await session.filesystem.patch(baseline)).trimEnd().split('\n')) print(line);
    print(PATCH_END);
    print();
    print('The host project is unchanged: session.writeBack() writes the work back to it, exportTo() to another');
    print('directory, or apply this patch (`sessionfs mcp --patch-out FILE --write-back` does both when it stops).');
  } finally {
    await session?.dispose();
    await rm(hostDir, { recursive: true, force: true });
  }
}
