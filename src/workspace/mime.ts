/**
 * MIME types guessed from a file's extension, for backends that do not store one. A small table of what
 * agents actually handle; anything else is `application/octet-stream`.
 */
const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  xml: 'application/xml',
  svg: 'image/svg+xml',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  jsx: 'text/javascript',
  ts: 'text/x-typescript',
  tsx: 'text/x-typescript',
  mts: 'text/x-typescript',
  cts: 'text/x-typescript',
  json: 'application/json',
  jsonl: 'application/jsonl',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  ini: 'text/plain',
  env: 'text/plain',
  sh: 'application/x-sh',
  bash: 'application/x-sh',
  py: 'text/x-python',
  rb: 'text/x-ruby',
  rs: 'text/x-rust',
  go: 'text/x-go',
  java: 'text/x-java',
  c: 'text/x-c',
  h: 'text/x-c',
  cpp: 'text/x-c++',
  hpp: 'text/x-c++',
  cs: 'text/x-csharp',
  php: 'application/x-php',
  sql: 'application/sql',
  log: 'text/plain',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/x-icon',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  wasm: 'application/wasm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

export function guessMimeType(path: string): string {
  // Every write of a file asks: only the extension is cut out of the path.
  const dot = path.lastIndexOf('.');
  if (dot <= path.lastIndexOf('/') + 1) return 'application/octet-stream';
  const extension = path.slice(dot + 1).toLowerCase();
  // Own keys only: `x.constructor` must not find Object.prototype's.
  return Object.hasOwn(BY_EXTENSION, extension) ? (BY_EXTENSION[extension] as string) : 'application/octet-stream';
}
