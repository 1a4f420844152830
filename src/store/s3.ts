// `sessionfs/s3`: the S3-compatible blob store, on its own entry point so that importing `sessionfs` never
// needs `@aws-sdk/client-s3` (an optional peer dependency).
export { s3BlobStore, type S3BlobStore, type S3BlobStoreOptions } from './s3-blob-store.js';
