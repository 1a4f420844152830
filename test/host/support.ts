import { tmpdir } from 'node:os';
import { afterEach } from 'vitest';
import { hostDriver, type HostDriver, type HostDriverOptions } from '../../src/backends/host/index.js';
import { tempDirs } from '../../src/testing/harness.js';
import { createWorkspace, type CreateWorkspaceOptions, type ManagedWorkspace } from '../../src/workspace/create-workspace.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

/** What a host test workspace takes: the host driver's options and the shared layer's. */
export type HostTestOptions = HostDriverOptions & Pick<CreateWorkspaceOptions, 'readOnly' | 'limits' | 'policy' | 'audit' | 'protect'>;

/** `createWorkspace(hostDriver(…), …)` with the options split between the two, the driver kept beside it. */
export function openHost(options: HostTestOptions = {}): { workspace: ManagedWorkspace; driver: HostDriver } {
  const { root, gitDir, exclude, changeDetection, ...shared } = options;
  const driver = hostDriver({
    ...(root === undefined ? {} : { root }),
    ...(gitDir === undefined ? {} : { gitDir }),
    ...(exclude === undefined ? {} : { exclude }),
    ...(changeDetection === undefined ? {} : { changeDetection }),
  });
  return { workspace: createWorkspace(driver, shared), driver };
}

/** Workspaces and scratch directories for one test, removed after it. */
export function scratch(): {
  workspace: (options?: HostTestOptions) => ManagedWorkspace;
  host: (options?: HostTestOptions) => { workspace: ManagedWorkspace; driver: HostDriver };
  dir: (prefix?: string) => string;
} {
  // First, so that (hooks run as a stack) the directories go after the workspaces on them are disposed.
  const tempDir = tempDirs();
  const workspaces: ManagedWorkspace[] = [];
  afterEach(async () => {
    for (const ws of workspaces.splice(0)) await ws.dispose();
  });
  return {
    workspace: (options) => {
      const { workspace } = openHost(options);
      workspaces.push(workspace);
      return workspace;
    },
    host: (options) => {
      const opened = openHost(options);
      workspaces.push(opened.workspace);
      return opened;
    },
    dir: tempDir,
  };
}

/** A git environment isolated from the user's, for the tests that use the git binary to inspect results. */
export const gitEnv = {
  PATH: process.env.PATH ?? '',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

/** The host driver under a host workspace (a test-only look behind the shared layer): its instrumentation. */
export function hostOf(workspace: SnapshotableWorkspace): HostDriver {
  const driver = (workspace as unknown as { driver: HostDriver }).driver;
  if (driver?.name !== 'host') throw new Error('not a host workspace');
  return driver;
}
