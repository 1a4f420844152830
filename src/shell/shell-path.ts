/**
 * Paths as the shell sees them: absolute, POSIX, the workspace root is `/`. Climbing above `/` stays at `/`
 * (as `cd /..` does on a real system), so no spelling of a path reaches outside the workspace.
 */
export function resolveShellPath(base: string, path: string): string {
  const segments: string[] = [];
  const joined = path.startsWith('/') ? path : `${base}/${path}`;
  for (const segment of joined.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/** The workspace path (relative, `''` for the root) for a shell path. */
export function toWorkspacePath(shellPath: string): string {
  return resolveShellPath('/', shellPath).slice(1);
}

/** The shell path for a workspace path as results show it (`/` for the root, relative otherwise). */
export function toShellPath(workspacePath: string): string {
  return workspacePath === '/' || workspacePath === '' ? '/' : `/${workspacePath}`;
}
