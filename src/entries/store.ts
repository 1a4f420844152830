// `sessionfs/store`: sessions that outlive a process (session stores, the store driver) and the blob stores
// and snapshotter they build on. The S3 blob store is `sessionfs/s3` (an optional peer dependency).
export * from '../store/index.js';
export { memoryBlobStore } from '../snapshots/blob-store.js';
export { BlobSnapshotter } from '../snapshots/blob-snapshotter.js';
