// `sessionfs/sources`: hydration from host folders (its schema, and the default workspace path of one).
export * from '../sources/index.js';
