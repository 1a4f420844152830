// `sessionfs/snapshots`: snapshot records, the content-addressed snapshotter and its memory blob store,
// the git patch between two snapshot trees, and the three-way merge of three.
export { WorkspaceSnapshotSchema } from '../snapshots/record.js';
export { BlobSnapshotter } from '../snapshots/blob-snapshotter.js';
export { memoryBlobStore } from '../snapshots/blob-store.js';
export { createGitPatch } from '../snapshots/patch.js';
export { mergeTrees, type MergeChange, type TreeMerge } from '../history/merge.js';
