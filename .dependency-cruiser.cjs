/**
 * The layering of src/ (docs/concepts.md): each layer may import the layers listed before it, never one
 * after it; backends never import each other; no cycles anywhere. `npm run lint` runs this, so a violation
 * fails CI (test/ci/layers.test.ts plants one of each and checks that it does).
 *
 * Data structures the backends share live below them: the persistent map (memory's tree and overlay's upper
 * layer) in src/snapshots/, since it is what makes their snapshots O(1) and imports nothing.
 */
const CONTRACT =
  'src/workspace/(types|errors|paths|limits|driver|progress|bytes|text|lazy-require|mime|time-slices|arguments|protocol-methods|driver-errors|driver-proxy|locks|watch-event|links)\\.ts$';
const LAYERS = [
  ['contract', `^${CONTRACT}`],
  ['text', '^src/text/'],
  ['governance', '^src/governance/'],
  ['snapshots', '^src/snapshots/'],
  ['shared layer', '^src/workspace/'],
  // What more than one backend needs from the host's files (the sandbox, walks, names, the allow-list):
  // below the backends, so overlay and host share it without importing each other.
  ['host files', '^src/host-files/'],
  ['backends', '^src/backends/'],
  ['sources and composition', '^src/(sources|compose)/'],
  ['export', '^src/export/'],
  ['store', '^src/store/'],
  // Operations, undo, blame and merge over snapshot trees: what sessions build their history on.
  ['history', '^src/history/'],
  // Real programs in a sandbox (session.exec): below the session, which runs them in its calls' order.
  ['programs', '^src/programs/'],
  ['session', '^src/session/'],
  // Per-user workspaces and sessions: a store namespace hands out sessions through createSession.
  ['namespaces', '^src/namespaces/'],
  ['tools', '^src/tools/'],
  ['shell', '^src/shell/'],
  ['cli and adapters', '^src/(cli|adapters)/'],
];

const upward = LAYERS.flatMap(([name, path], index) => {
  const above = LAYERS.slice(index + 1).map(([, abovePath]) => abovePath);
  if (above.length === 0) return [];
  return [
    {
      name: `no-upward-from-${name.replace(/\W+/g, '-')}`,
      comment: `${name} imports only the layers below it (docs/concepts.md)`,
      severity: 'error',
      from: { path, ...(index === 0 ? {} : { pathNot: LAYERS.slice(0, index).map(([, p]) => p) }) },
      to: { path: above, pathNot: LAYERS.slice(0, index + 1).map(([, p]) => p) },
    },
  ];
});

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'imports point one way', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'no-cross-backend',
      comment: 'a backend never imports another backend: what two share lives below them',
      severity: 'error',
      from: { path: '^src/backends/([^/]+)/' },
      to: { path: '^src/backends/([^/]+)/', pathNot: '^src/backends/$1/' },
    },
    {
      name: 'no-entry-point-imports',
      comment: 'src/index.ts and src/entries/ (the subpaths) only re-export; nothing inside imports them',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(index\\.ts|entries/)' },
      to: { path: '^src/(index\\.ts|entries/)' },
    },
    ...upward,
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
  },
};
