import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { normalizePath, type NormalizedPath } from '../workspace/paths.js';

/**
 * A host directory the server was started with: a mount's source or `--root` (with where it appears in the
 * workspace), or an allowed host root (`--allow`, no workspace path of its own).
 */
export interface HostArea {
  hostPath: string;
  /** Where the directory appears in the workspace ('' or '/' for the whole workspace); absent for an allowed root. */
  workspacePath?: string;
}

/** One client root, as the server judged it. `message` names only the URI the client sent, never a host path of ours. */
export type RootVerdict =
  { uri: string; accepted: true; workspacePaths: NormalizedPath[]; message: string } | { uri: string; accepted: false; message: string };

export interface RootsResolution {
  verdicts: RootVerdict[];
  /**
   * The workspace paths the tools are limited to, or `undefined` for the whole workspace: when no root was
   * accepted (the server keeps what it was started with, as the official filesystem server does), or when
   * an accepted root spans the whole workspace.
   */
  scope: NormalizedPath[] | undefined;
}

interface ResolvedArea {
  hostPath: string;
  workspacePath: NormalizedPath | undefined;
}

/** The areas with their host paths made absolute and symlink-free (an area that does not exist is dropped). */
export async function resolveHostAreas(areas: readonly HostArea[]): Promise<ResolvedArea[]> {
  const resolved: ResolvedArea[] = [];
  for (const area of areas) {
    let hostPath: string;
    try {
      hostPath = await realpath(resolve(area.hostPath));
    } catch {
      continue;
    }
    resolved.push({ hostPath, workspacePath: area.workspacePath === undefined ? undefined : normalizePath(area.workspacePath) });
  }
  return resolved;
}

/**
 * Judges the client's roots against what the server was started with. Roots only ever narrow: a root is
 * accepted when it shares files with the workspace (it lies inside a mount's source or `--root`, or holds
 * one), and then the tools are limited to the workspace paths it covers; a root outside every directory the
 * server was started with, or one that holds no part of the workspace, is refused. Unlike the official
 * filesystem server, whose roots replace its directories, a root can never open a host directory the
 * server was not started with.
 */
export async function resolveClientRoots(roots: readonly { uri: string }[], areas: readonly ResolvedArea[]): Promise<RootsResolution> {
  const verdicts: RootVerdict[] = [];
  for (const { uri } of roots) verdicts.push(await judgeRoot(uri, areas));
  const accepted = verdicts.flatMap((v) => (v.accepted ? v.workspacePaths : []));
  const scope = accepted.length === 0 || accepted.includes('') ? undefined : [...new Set(accepted)].sort();
  return { verdicts, scope };
}

async function judgeRoot(uri: string, areas: readonly ResolvedArea[]): Promise<RootVerdict> {
  const refused = (why: string): RootVerdict => ({ uri, accepted: false, message: `root ${uri} refused: ${why}` });
  let hostPath: string;
  try {
    const url = new URL(uri);
    if (url.protocol !== 'file:') return refused('only file:// roots name directories this server can serve');
    hostPath = fileURLToPath(url);
  } catch {
    return refused('not a valid file:// URI');
  }
  try {
    hostPath = await realpath(hostPath);
    if (!(await stat(hostPath)).isDirectory()) return refused('not a directory');
  } catch {
    return refused('no such directory on the machine this server runs on');
  }
  const workspacePaths: NormalizedPath[] = [];
  let touches = false;
  for (const area of areas) {
    const inside = relativeInside(hostPath, area.hostPath);
    const holds = relativeInside(area.hostPath, hostPath) !== undefined;
    if (inside === undefined && !holds) continue;
    touches = true;
    if (area.workspacePath === undefined) continue;
    workspacePaths.push(inside === undefined ? area.workspacePath : normalizePath(`${area.workspacePath}/${inside}`));
  }
  if (!touches) return refused('outside the directories this server was started with');
  if (workspacePaths.length === 0) return refused('it holds no part of this workspace (nothing from it is mounted)');
  const shown = workspacePaths.map((p) => (p === '' ? '/ (the whole workspace)' : p)).join(', ');
  return { uri, accepted: true, workspacePaths, message: `root ${uri} accepted: tools may use ${shown}` };
}

/** `path` relative to `base` with '/' separators when it is `base` or inside it ('' when equal), else undefined. */
function relativeInside(path: string, base: string): string | undefined {
  const rel = relative(base, path);
  if (rel === '') return '';
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}
