/**
 * How the name of every temp directory sessionfs owns starts (`sessionfs-<kind>-<owner>-XXXXXX`, see
 * `backends/host/owned-temp.ts`): a session hides paths under such names from the model (`session/host-dirs.ts`).
 */
export const OWNED_TEMP_PREFIX = 'sessionfs-';
