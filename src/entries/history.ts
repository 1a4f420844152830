// `sessionfs/history`: what `session.history()`, `undo()`, `redo()` and `blame()` answer and throw (see
// docs/history.md), and the argument summaries the history shows.
export * from '../history/index.js';
