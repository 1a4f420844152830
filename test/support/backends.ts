import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { kvDriver } from '../../examples/kv-backend.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { overlayDriver } from '../../src/backends/overlay/index.js';
import { composeDriver } from '../../src/compose/index.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { storeDriver } from '../../src/store/store-driver.js';
import { tempDirs, type ComplianceHarness } from '../../src/testing/harness.js';
import { strictDriver } from '../../src/testing/strict-driver.js';
import type { BackendDriver } from '../../src/workspace/driver.js';
import { createWorkspace, type CreateWorkspaceOptions, type ManagedWorkspace } from '../../src/workspace/create-workspace.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

/** What a test may ask of any backend: the shared layer's options. */
export type TestWorkspaceOptions = Pick<CreateWorkspaceOptions, 'policy' | 'readOnly' | 'limits' | 'audit' | 'protect'>;

/**
 * One backend as every suite sees it. The project's one backend matrix: the compliance suite, the typed-error
 * sweep, governance, hydration and session tests all pick their backends from `BACKENDS`.
 */
export interface BackendUnderTest extends ComplianceHarness {
  name: string;
  /** The `createSession({ backend })` kind, for the backends sessions are created on by name. */
  session?: 'memory' | 'host';
  /** A fresh, empty workspace (not disposed for you: see `workspaceFactory`/`disposing`). */
  open(options?: TestWorkspaceOptions): SnapshotableWorkspace;
  create(options?: TestWorkspaceOptions): Promise<SnapshotableWorkspace>;
  /** A second workspace over the same files as `workspace`, seen through its own options. */
  sameFiles?(workspace: SnapshotableWorkspace, options: TestWorkspaceOptions): SnapshotableWorkspace;
}

/**
 * Calls the shared layer made to the strict driver outside its preconditions (see `strictDriver`), checked
 * after every test of every file that uses the matrix: a violation a caller swallowed fails the test too.
 */
const strictViolations: string[] = [];
const recordViolation = (message: string): void => void strictViolations.push(message);
afterEach(() => {
  expect(strictViolations.splice(0), 'driver calls outside the preconditions docs/writing-a-backend.md promises').toEqual([]);
});

/** Overlay lowers: a workspace may outlive the test that opened it, so they go when the file is done. */
const scratchDir = tempDirs({ until: 'file' });

/** Where links are planted for a workspace whose host files live in a directory of their own. */
const linkHomes = new WeakMap<SnapshotableWorkspace, string>();

async function plantLink(workspace: SnapshotableWorkspace, linkPath: string, target: string): Promise<void> {
  const at = join(linkHomes.get(workspace) ?? workspace.root, ...linkPath.split('/').filter((s) => s !== ''));
  await fs.mkdir(dirname(at), { recursive: true });
  await fs.symlink(target, at);
}

function homed<T extends SnapshotableWorkspace>(workspace: T, home: string): T {
  linkHomes.set(workspace, home);
  return workspace;
}

/** The driver under a shared-layer workspace (a test-only look behind the protected field). */
function driverOf(workspace: SnapshotableWorkspace): BackendDriver {
  return (workspace as unknown as { driver: BackendDriver }).driver;
}

function backend(entry: Omit<BackendUnderTest, 'create'>): BackendUnderTest {
  return { ...entry, create: async (options) => entry.open(options) };
}

function overlay(options: TestWorkspaceOptions = {}): ManagedWorkspace {
  const lower = scratchDir('sessionfs-lower-');
  return homed(createWorkspace(overlayDriver({ lower, allowedHostRoots: [lower] }), options), lower);
}

/** A composition with one mount at the root, so a fresh composed workspace is empty like any other. */
function composedOver(options: TestWorkspaceOptions, mount: SnapshotableWorkspace, home?: string): SnapshotableWorkspace {
  const composed = createWorkspace(composeDriver({ mounts: [{ path: '/', workspace: mount, access: 'read-write' }] }), options);
  return home === undefined ? composed : homed(composed, home);
}

export const BACKENDS: BackendUnderTest[] = [
  backend({
    name: 'memory',
    session: 'memory',
    open: (options) => createWorkspace(memoryDriver(), options),
    sameFiles: (workspace, options) => createWorkspace(driverOf(workspace), options),
  }),
  backend({
    name: 'host',
    session: 'host',
    open: (options) => createWorkspace(hostDriver(), options),
    sameFiles: (workspace, options) => createWorkspace(hostDriver({ root: workspace.root }), options),
    symlink: plantLink,
  }),
  backend({ name: 'overlay', open: overlay, symlink: plantLink }),
  backend({ name: 'compose over memory', open: (options = {}) => composedOver(options, createWorkspace(memoryDriver())) }),
  backend({
    name: 'compose over host',
    open: (options = {}) => {
      const host = createWorkspace(hostDriver());
      return composedOver(options, host, host.root);
    },
    symlink: plantLink,
  }),
  backend({
    name: 'compose over overlay',
    open: (options = {}) => {
      const lower = overlay();
      return composedOver(options, lower, linkHomes.get(lower));
    },
    symlink: plantLink,
  }),
  backend({
    name: 'store (remote sessions)',
    // The lazy blob-backed tree remote sessions run on (`createSession({ store })`), over an in-memory blob store.
    // No `sameFiles` yet: the governance suites it would join patch, and its snapshots cannot be read as a tree.
    open: (options) => createWorkspace(storeDriver({ blobs: memoryBlobStore() }), options),
  }),
  backend({
    name: 'kv (third-party driver)',
    // The example's driver under this checkout's shared layer (`createKvWorkspace` itself goes through the
    // built package, whose error classes and audit registry are other objects than src/'s).
    open: (options) => createWorkspace(kvDriver(), options),
    fileKinds: false,
    sameFiles: (workspace, options) => createWorkspace(driverOf(workspace), options),
  }),
  backend({
    name: 'strict (third-party driver)',
    // The example's driver held to the preconditions the docs promise it: a call outside them fails and
    // lands in `strictViolations`, which the compliance suite and every matrix test check after each test.
    open: (options) => createWorkspace(strictDriver(kvDriver(), recordViolation), options),
    fileKinds: false,
    sameFiles: (workspace, options) => createWorkspace(driverOf(workspace), options),
    violations: () => strictViolations.splice(0),
  }),
  backend({
    name: 'kv with file kinds, strict (third-party driver)',
    // The example's opt-in for executable bits and links (`resolveLinks` following them inside the store),
    // held to the preconditions of the optional primitives too.
    open: (options) => createWorkspace(strictDriver(kvDriver({ fileKinds: true }), recordViolation), options),
    sameFiles: (workspace, options) => createWorkspace(driverOf(workspace), options),
    violations: () => strictViolations.splice(0),
  }),
];

export function backendNamed(name: string): BackendUnderTest {
  const found = BACKENDS.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no backend named ${name}`);
  return found;
}

/** The backends sessions are created on by name (`createSession({ backend })`). */
export const SESSION_BACKENDS = BACKENDS.filter(
  (entry): entry is BackendUnderTest & { session: 'memory' | 'host' } => entry.session !== undefined,
);

/** The session kinds alone, for `for (const backend of SESSION_KINDS)` loops. */
export const SESSION_KINDS = SESSION_BACKENDS.map((entry) => entry.session);

/** The backends on which a second view over the same files can be opened (governance: a planted file, a governed view). */
export const SHARED_FILE_BACKENDS = BACKENDS.filter((entry) => entry.sameFiles !== undefined);

/** Workspaces created in one test, disposed after it. */
export function workspaceFactory(backend: BackendUnderTest): (options?: TestWorkspaceOptions) => Promise<SnapshotableWorkspace> {
  const { create } = disposing(backend);
  return async (options) => create(options);
}

/** A factory whose workspaces are disposed after each test, and pairs of an open and a governed view of the same files. */
export function disposing<W extends SnapshotableWorkspace = ManagedWorkspace>(
  backend: BackendUnderTest,
): {
  create: (options?: TestWorkspaceOptions) => W;
  /** An unrestricted workspace to plant files in, and one over the same files with `options`. */
  pair: (options: TestWorkspaceOptions) => { open: W; governed: W };
} {
  const created: SnapshotableWorkspace[] = [];
  afterEach(async () => {
    // The governed view first: the open one owns the files (a host temp root) and removes them.
    for (const workspace of created.splice(0).reverse()) await workspace.dispose();
  });
  const track = (workspace: SnapshotableWorkspace): W => (created.push(workspace), workspace as W);
  return {
    create: (options) => track(backend.open(options)),
    pair: (options) => {
      if (backend.sameFiles === undefined) throw new Error(`${backend.name} cannot open a second view of its files`);
      const open = track(backend.open());
      return { open, governed: track(backend.sameFiles(open, options)) };
    },
  };
}

/** A tree entry: text or bytes for a file, `null` for an empty directory, `{ link }` for a symlink. */
export type TreeSpec = Record<string, string | Uint8Array | null | { link: string }>;

/** Real temp directories (see `tempDirs`) and trees written into them, removed after each test. */
export function hostTrees(): { dir(): string; tree(spec: TreeSpec, base?: string): string } {
  const tempDir = tempDirs({ prefix: 'sessionfs-mounts-' });
  const dir = (): string => tempDir();
  return {
    dir,
    tree(spec, base = dir()) {
      writeTree(base, spec);
      return base;
    },
  };
}

export function writeTree(base: string, spec: TreeSpec): void {
  for (const [path, content] of Object.entries(spec)) {
    const target = join(base, path);
    if (content === null) {
      mkdirSync(target, { recursive: true });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    if (typeof content === 'object' && !(content instanceof Uint8Array)) symlinkSync(content.link, target);
    else writeFileSync(target, content);
  }
}

/** Runs `action`, returning what it threw (or failing when it did not). */
export async function caught(action: () => Promise<unknown>): Promise<Error & { code?: string; path?: string }> {
  try {
    await action();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the action to throw');
}
