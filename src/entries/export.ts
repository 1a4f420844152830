// `sessionfs/export`: work leaving the workspace: exportTo, git patches, git remotes (docs/export.md).
export * from '../export/index.js';
