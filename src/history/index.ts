export { NothingToRedoError, NothingToUndoError } from './errors.js';
export { summarizeArguments } from './summary.js';
export type * from './types.js';
