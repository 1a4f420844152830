import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';

const run = promisify(execFile);

/**
 * Transpiles TypeScript `source` to `outFile` (.mjs, inside the repository so `sessionfs` resolves to this
 * package through its own `exports`) and runs it with Node in a fresh empty temporary directory. Throws
 * with the snippet's output when it exits non-zero.
 */
export async function runSnippet(label: string, source: string, outFile: string): Promise<void> {
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  await writeFile(outFile, js);
  const cwd = await mkdtemp(join(tmpdir(), 'sessionfs-snippet-'));
  try {
    await run(process.execPath, [outFile], { cwd, timeout: 30_000 });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${label} failed:\n${stderr ?? ''}${stdout ?? ''}`);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}
