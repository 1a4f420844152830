/** Version-control internals: what hydration skips and an overlay hides unless asked for (then read-only). */
const VERSION_CONTROL = new Set(['.git', '.hg', '.svn', '.jj']);
const DOT = 0x2e;

/** The same as globs, for what shows host folders without copying them (an overlay's `exclude`). */
export const VERSION_CONTROL_GLOBS: readonly string[] = Object.freeze([...VERSION_CONTROL].map((name) => `**/${name}`));

export function isVersionControl(name: string): boolean {
  // Every name of the set is a dot and two or three letters: most names are told apart without a lower-cased copy.
  if (name.length < 3 || name.length > 4 || name.charCodeAt(0) !== DOT) return false;
  return VERSION_CONTROL.has(name.toLowerCase());
}
