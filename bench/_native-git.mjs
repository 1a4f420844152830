// Native git as the benches run it beside sessionfs: isolated from the user's config, hooks and identity,
// the way a shadow-git checkpointer would script it.
import { execFileSync } from 'node:child_process';

/** The environment native git runs with: no system or global config, a fixed identity, HOME in `scratch`. */
export function nativeGitEnv(scratch) {
  return {
    PATH: process.env.PATH,
    HOME: scratch,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@localhost',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@localhost',
  };
}

/** Whether a git binary runs here; benches report `null` figures without one. */
export function hasNativeGit(env) {
  try {
    execFileSync('git', ['--version'], { env, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
