import type { SnapshotableWorkspace } from '../workspace/types.js';
import { InvalidArgumentError, WorkspaceError } from '../workspace/errors.js';
import type { DestinationState, ExportDestination } from './destination.js';

/**
 * A workspace as the destination of an export plan, written through the protocol: what `pullSnapshot`
 * uses for backends whose files it cannot reach directly. The protocol has no symlinks and no permission
 * bits, so a symlink cannot be written here (InvalidArgumentError) and files are never executable.
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
    if (kind === 'symlink') return { kind: 'other' };
    const { content } = await this.#workspace.readBytes(path);
    return { kind: 'file', bytes: content, executable: false, mode: 0o644 };
  }

  async #kind(path: string): Promise<'file' | 'directory' | 'symlink' | undefined> {
    try {
      const info = await this.#workspace.stat(path);
      return info.isSymlink ? 'symlink' : info.isDirectory ? 'directory' : 'file';
    } catch (error) {
      if (error instanceof WorkspaceError && (error.code === 'ENOENT' || error.code === 'ENOTDIR')) return undefined;
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

  async put(
    path: string,
    entry: { kind: 'file'; bytes: Uint8Array; mode: number } | { kind: 'symlink'; bytes: Uint8Array },
  ): Promise<void> {
    if (entry.kind === 'symlink')
      throw new InvalidArgumentError(`the ${this.#workspace.backend} backend cannot hold the symlink ${path}`, path);
    await this.#workspace.writeBytes(path, entry.bytes);
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
