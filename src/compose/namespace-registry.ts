import type { DirectoryNamespace } from './namespace.js';

/**
 * The directory namespaces made in this process, so that `createSession({ namespace })` can recognise one
 * without importing the namespace module (which loads the host backend) into every session's start: a
 * namespace the caller passes was made by that module, which registered it.
 */
const namespaces = new WeakSet<object>();

export function registerDirectoryNamespace(namespace: object): void {
  namespaces.add(namespace);
}

export function isDirectoryNamespace(value: unknown): value is DirectoryNamespace {
  return typeof value === 'object' && value !== null && namespaces.has(value);
}
