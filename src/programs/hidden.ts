import * as fs from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import type { WorkspacePolicy } from '../governance/policy.js';
import { normalizeInside, splitPath } from '../workspace/paths.js';
import type { HiddenPath } from './engine.js';

/**
 * What of the lower tree a policy's `deny` hides from the file tools and can be hidden from programs too:
 * each literal path (`secret`, `config/key.pem`) and each directory denied whole (`secret/**`), matched
 * without regard to case as the policy matches them. A glob that picks names anywhere (`**\/*.env`,
 * `blockedExtensions`, `allow`) is not: finding its matches would cost a walk of the tree on every run
 * (docs/programs.md). A path through a symlink is left alone (a mount would follow the link).
 */
export function hiddenPaths(policy: Readonly<WorkspacePolicy> | undefined, lower: string): HiddenPath[] {
  const hidden = new Map<string, HiddenPath>();
  for (const raw of policy?.deny ?? []) {
    const pattern = raw.trim().replace(/^(?:\.?\/)+/, '');
    const scan = picomatch.scan(pattern);
    const whole = !scan.isGlob ? pattern : scan.glob === '**' ? scan.base : undefined;
    const path = whole === undefined ? undefined : normalizeInside(whole);
    if (path === undefined || path === '') continue;
    // `secret/**` matches `secret` itself too: a file of that name is hidden like a directory.
    for (const found of matching(lower, splitPath(path))) hidden.set(found.path, found);
  }
  // What lies inside a hidden directory is hidden with it (and a mount there could not be made).
  const all = [...hidden.values()];
  return all.filter(({ path }) => !all.some((other) => other.kind === 'directory' && path.startsWith(`${other.path}/`)));
}

/** The entries of `lower` at `names`, each name matched without regard to case, through real directories only. */
function matching(lower: string, names: readonly string[]): HiddenPath[] {
  let at: HiddenPath[] = [{ path: '', kind: 'directory' }];
  for (const [index, name] of names.entries()) {
    const next: HiddenPath[] = [];
    for (const dir of at) {
      for (const entry of namesIn(join(lower, dir.path))) {
        if (entry.toLowerCase() !== name.toLowerCase()) continue;
        const path = dir.path === '' ? entry : `${dir.path}/${entry}`;
        const kind = kindOf(join(lower, path));
        if (kind === 'directory' || (kind === 'file' && index === names.length - 1)) next.push({ path, kind });
      }
    }
    at = next;
  }
  return at;
}

function namesIn(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** A real directory or regular file (never a link followed), or undefined. */
function kindOf(path: string): HiddenPath['kind'] | undefined {
  try {
    const stat = fs.lstatSync(path);
    return stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
}
