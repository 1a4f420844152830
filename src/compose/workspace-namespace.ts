import { StoreNamespace, type StoreNamespaceOptions } from '../store/store-namespace.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { DirectoryNamespace, type WorkspaceNamespaceOptions } from './namespace.js';

/** Per-user workspaces: under a host directory (`{ dir }`) or in a session store (`{ store }`). */
export type WorkspaceNamespace = DirectoryNamespace | StoreNamespace;

export interface WorkspaceNamespaceConstructor {
  /** Each user's workspace is a `HostWorkspace` under `dir`; `open(user)` returns it at once. */
  new (options: WorkspaceNamespaceOptions): DirectoryNamespace;
  /** Each user's workspace is the store session `user:<encoded id>`; `open(user)` resolves to that session. */
  new (options: StoreNamespaceOptions): StoreNamespace;
}

/**
 * One constructor for both kinds of namespace, as DESIGN names it (`new WorkspaceNamespace({ dir })`,
 * `new WorkspaceNamespace({ store })`); `instanceof WorkspaceNamespace` holds for both.
 */
class AnyNamespace {
  constructor(options: WorkspaceNamespaceOptions | StoreNamespaceOptions) {
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
    const hasDir = (options as Partial<WorkspaceNamespaceOptions>).dir !== undefined;
    const hasStore = (options as Partial<StoreNamespaceOptions>).store !== undefined;
    if (hasDir === hasStore)
      throw new InvalidArgumentError('a namespace takes exactly one of dir (a host directory) or store (a SessionStore)');
    const made = hasStore
      ? new StoreNamespace(options as StoreNamespaceOptions)
      : new DirectoryNamespace(options as WorkspaceNamespaceOptions);
    return made as unknown as AnyNamespace;
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof DirectoryNamespace || value instanceof StoreNamespace;
  }
}

export const WorkspaceNamespace = AnyNamespace as unknown as WorkspaceNamespaceConstructor;
