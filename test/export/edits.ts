import { chmodSync, lstatSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { WorkspaceError } from '../../src/workspace/errors.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

/** Random edits for property tests: protocol writes, deletes and renames; with `kinds` also chmod and links (on the host behind the protocol's back). */
export type Op =
  | { op: 'write'; path: string; bytes: Uint8Array }
  | { op: 'delete'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'chmod'; path: string }
  | { op: 'link'; path: string; target: string };

const NAMES = ['a', 'b c', 'é', '日本', 'q"t', 'x.bin'];
const DIRS = ['', 'd/', 'd/e f/'];
const path = fc.tuple(fc.constantFrom(...DIRS), fc.constantFrom(...NAMES)).map(([dir, name]) => `${dir}${name}`);
const text = fc
  .array(fc.tuple(fc.constantFrom('x', 'y', 'z', '', 'ünï'), fc.constantFrom('\n', '\r\n')), { maxLength: 12 })
  .chain((lines) => fc.boolean().map((final) => lines.map(([l, e]) => l + e).join('') + (final ? 'tail' : '')));
const content = fc.oneof(
  text.map((t) => new TextEncoder().encode(t)),
  fc.uint8Array({ maxLength: 200 }).map((b) => Uint8Array.from([0, ...b])),
  fc.constant(new Uint8Array()),
  fc.constant(Uint8Array.from([0x66, 0xff, 0x0a])),
);
export const op = (kinds: boolean): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant('write' as const), path, bytes: content }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), path: fc.oneof(path, fc.constantFrom('d', 'd/e f')) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('rename' as const), from: path, to: path }) },
    ...(kinds
      ? [
          { weight: 2, arbitrary: fc.record({ op: fc.constant('chmod' as const), path }) },
          {
            weight: 1,
            arbitrary: fc.record({ op: fc.constant('link' as const), path, target: fc.constantFrom('a', '../x', 'd/é', 'b c') }),
          },
        ]
      : []),
  );

export async function run(workspace: SnapshotableWorkspace, ops: Op[]): Promise<void> {
  for (const step of ops) {
    try {
      if (step.op === 'write') await workspace.writeBytes(step.path, step.bytes);
      else if (step.op === 'delete') await workspace.delete(step.path, { recursive: true });
      else if (step.op === 'rename') await workspace.rename(step.from, step.to, { overwrite: true });
      else if (workspace.backend !== 'host') {
        if (step.op === 'chmod') await workspace.setExecutable(step.path, !(await workspace.stat(step.path)).executable);
        else await workspace.symlink(step.target, step.path);
      } else {
        // Outside the protocol: what a shell in a host workspace does.
        const abs = join(workspace.root, step.path);
        if (step.op === 'chmod') {
          if (lstatSync(abs, { throwIfNoEntry: false })?.isFile() === true) chmodSync(abs, statSync(abs).mode & 0o100 ? 0o644 : 0o755);
        } else if (
          lstatSync(abs, { throwIfNoEntry: false }) === undefined &&
          lstatSync(join(abs, '..'), { throwIfNoEntry: false })?.isDirectory() === true
        ) {
          symlinkSync(step.target, abs);
        }
      }
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
    }
  }
}

/** The workspace's files and links through the protocol, in `filesOf`'s shape (kv has no links or modes). */
export async function protocolFiles(workspace: SnapshotableWorkspace, base = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await workspace.list(base)) {
    if (entry.isSymlink) out[entry.path] = `link ${await workspace.readlink(entry.path)}`;
    else if (entry.isDirectory) Object.assign(out, await protocolFiles(workspace, entry.path));
    else {
      const mode = (await workspace.stat(entry.path)).executable ? '100755' : '100644';
      out[entry.path] = `file ${mode} ${Buffer.from((await workspace.readBytes(entry.path)).content).toString('latin1')}`;
    }
  }
  return out;
}
