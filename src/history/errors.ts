import { InvalidArgumentError } from '../workspace/errors.js';

/** `undo()` with no turn left to undo (every turn that changed something is undone, or retention dropped it). Code `EINVAL`. */
export class NothingToUndoError extends InvalidArgumentError {}

/** `redo()` with nothing undone since the last change (a new change clears what could be redone). Code `EINVAL`. */
export class NothingToRedoError extends InvalidArgumentError {}
