// `sessionfs/snapshots`: snapshot records, the content-addressed snapshotter and its memory blob store,
// and the git patch between two snapshot trees.
export { WorkspaceSnapshotSchema } from '../snapshots/record.js';
export { BlobSnapshotter } from '../snapshots/blob-snapshotter.js';
export { memoryBlobStore } from '../snapshots/blob-store.js';
export { createGitPatch } from '../snapshots/patch.js';
