/** Version-control internals: what hydration skips and an overlay hides unless asked for (then read-only). */
const VERSION_CONTROL = new Set(['.git', '.hg', '.svn', '.jj']);

/** The same as globs, for what shows host folders without copying them (an overlay's `exclude`). */
export const VERSION_CONTROL_GLOBS: readonly string[] = Object.freeze([...VERSION_CONTROL].map((name) => `**/${name}`));

export function isVersionControl(name: string): boolean {
  return VERSION_CONTROL.has(name.toLowerCase());
}
