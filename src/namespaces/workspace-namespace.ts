import { StoreNamespace, type StoreNamespaceOptions } from './store-namespace.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { DirectoryNamespace, type DirectoryNamespaceOptions } from './directory-namespace.js';

export type { DirectoryNamespaceOptions } from './directory-namespace.js';
export type { StoreNamespaceOptions } from './store-namespace.js';
export type { DirectoryNamespace } from './directory-namespace.js';
export type { StoreNamespace } from './store-namespace.js';

/** Per-user workspaces: under a host directory (`{ dir }`) or in a session store (`{ store }`). */
export type WorkspaceNamespace = DirectoryNamespace | StoreNamespace;
export type WorkspaceNamespaceOptions = DirectoryNamespaceOptions | StoreNamespaceOptions;

export interface WorkspaceNamespaceConstructor {
  /** Each user's workspace is a host workspace under `dir`; `open(user)` returns it at once. */
  new (options: DirectoryNamespaceOptions): DirectoryNamespace;
  /** Each user's workspace is the store session `user:<encoded id>` (`createSession({ store, sessionId })`); `open(user)` resolves to it. */
  new (options: StoreNamespaceOptions): StoreNamespace;
}

/**
 * The one constructor of namespaces (`new WorkspaceNamespace({ dir })`, `new WorkspaceNamespace({ store })`);
 * `instanceof WorkspaceNamespace` holds for both kinds. `createSession({ namespace, user })` opens a session
 * on a user's workspace in either.
 */
class AnyNamespace {
  constructor(options: WorkspaceNamespaceOptions) {
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
    const hasDir = (options as Partial<DirectoryNamespaceOptions>).dir !== undefined;
    const hasStore = (options as Partial<StoreNamespaceOptions>).store !== undefined;
    if (hasDir === hasStore)
      throw new InvalidArgumentError('a namespace takes exactly one of dir (a host directory) or store (a SessionStore)');
    const made = hasStore
      ? new StoreNamespace(options as StoreNamespaceOptions)
      : new DirectoryNamespace(options as DirectoryNamespaceOptions);
    return made as unknown as AnyNamespace;
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof DirectoryNamespace || value instanceof StoreNamespace;
  }
}

export const WorkspaceNamespace = AnyNamespace as unknown as WorkspaceNamespaceConstructor;
