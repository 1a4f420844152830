// `sessionfs/compose`: mount tables (composeDriver is also in the root) and their access levels.
export * from '../compose/index.js';
