import type { SnapshotableWorkspace } from '../workspace/types.js';
import { WorkspaceError } from '../workspace/errors.js';
import type { DestinationState, ExportDestination } from './destination.js';

/**
 * A workspace as the destination of an export plan, written through the protocol: what `pullSnapshot`
 * uses for backends whose files it cannot reach directly. Links are read as links (`readlink`, never
 * followed) and written with `symlink`; executable bits with `write({ executable })`. A backend without
 * them answers `NotSupportedError` for a link or an executable file.
 */
export class WorkspaceDestination implements ExportDestination {
  readonly #workspace: SnapshotableWorkspace;

  constructor(workspace: SnapshotableWorkspace) {
    this.#workspace = workspace;
  }

  async state(path: string): Promise<DestinationState> {
    const names = path.split('/');
    for (let depth = 1; depth < names.length; depth += 1) {
      const ancestor = names.slice(0, depth).join('/');
      const kind = await this.#kind(ancestor);
      if (kind === undefined) return { kind: 'missing' };
      if (kind !== 'directory') return { kind: 'blocked', by: ancestor, link: kind === 'symlink' };
    }
    const kind = await this.#kind(path);
    if (kind === undefined) return { kind: 'missing' };
    if (kind === 'directory') return { kind: 'directory' };
    if (kind === 'symlink') return { kind: 'symlink', bytes: Buffer.from(await this.#workspace.readlink(path)) };
    const { content } = await this.#workspace.readBytes(path);
    const executable = (await this.#workspace.stat(path)).executable;
    return { kind: 'file', bytes: content, executable, mode: executable ? 0o755 : 0o644 };
  }

  /** What stands at `path`, a link not followed (one leading out of the workspace is still a link). */
  async #kind(path: string): Promise<'file' | 'directory' | 'symlink' | undefined> {
    try {
      const info = await this.#workspace.stat(path);
      return info.isSymlink ? 'symlink' : info.isDirectory ? 'directory' : 'file';
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      // A link stat cannot follow (out of the workspace, a loop) is a link all the same.
      if (error.code === 'EACCES' || error.code === 'ELOOP')
        return this.#workspace.readlink(path).then(
          () => 'symlink' as const,
          () => Promise.reject(error),
        );
      throw error;
    }
  }

  async leavesBelow(path: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await this.#workspace.list(path)) {
      if (entry.isDirectory && !entry.isSymlink) out.push(...(await this.leavesBelow(entry.path)));
      else out.push(entry.path);
    }
    return out;
  }

  async makeDirectory(path: string): Promise<void> {
    if (path !== '') await this.#workspace.mkdir(path, { parents: true, existOk: true });
  }

  /** A file or a link at `path`, replacing a link there (never writing through it). */
  async put(
    path: string,
    entry: { kind: 'file'; bytes: Uint8Array; mode: number } | { kind: 'symlink'; bytes: Uint8Array },
  ): Promise<void> {
    const workspace = this.#workspace;
    if (entry.kind === 'symlink') {
      const target = Buffer.from(entry.bytes).toString();
      // The bulk write puts a link over a file or link in one step (a backend without links refuses it first).
      if (workspace.writeFiles !== undefined) await workspace.writeFiles([{ kind: 'symlink', path, target }]);
      else {
        await workspace.delete(path).catch(missingIsFine);
        await workspace.symlink(target, path);
      }
      return;
    }
    if ((await this.#kind(path)) === 'symlink') await workspace.delete(path);
    await workspace.writeBytes(path, entry.bytes, { executable: (entry.mode & 0o100) !== 0 });
  }

  async remove(path: string): Promise<void> {
    await this.#workspace.delete(path);
  }

  async removeEmptyDirectory(path: string): Promise<boolean> {
    if ((await this.#workspace.list(path)).length > 0) return false;
    await this.#workspace.delete(path);
    return true;
  }
}

function missingIsFine(error: unknown): void {
  if (error instanceof WorkspaceError && error.code === 'ENOENT') return;
  throw error;
}
