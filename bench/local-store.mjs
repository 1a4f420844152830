#!/usr/bin/env node
// The local session store on a 10k-file session, side by side with AgentFS (its SQLite file) doing the same
// work when `agentfs-sdk` is installed (it is not a dependency: `npm i --no-save agentfs-sdk` to compare).
//   publish:  10 files changed in a 10k-file session, then publish (the head moves; fsync on)  ≤ 20 ms
//   resume:   a new store object, createSession({ store, sessionId }), then the first read_file                        ≤ 100 ms
//   dedup:    10 sessions holding the same 10k-file tree: store bytes / tree bytes             ≤ 1.1x
//             (AgentFS: one database per session, nothing shared: 10x one database's bytes, WAL included)
// Prints one JSON document. Usage: node bench/local-store.mjs [files]   (after `npm run build`)
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSession, workspaceTools } from '../dist/src/index.js';
import { localSessionStore } from '../dist/src/entries/store.js';
import { median, round } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 10_000);
const ROUNDS = 9;
const base = mkdtempSync(join(tmpdir(), 'sessionfs-bench-local-'));

/** A source-like tree: 100 folders, sizes from 200 B to 8 KiB (about 4 KiB on average), deterministic. */
function tree() {
  const files = [];
  let bytes = 0;
  for (let i = 0; i < FILES; i += 1) {
    const size = 200 + ((i * 7919) % 7993);
    const content = `// file ${i}\n`.padEnd(size, String.fromCharCode(97 + (i % 26)));
    files.push([`src/d${String(i % 100).padStart(2, '0')}/f${i}.ts`, content]);
    bytes += Buffer.byteLength(content);
  }
  return { files, bytes };
}

function apparentBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? apparentBytes(path) : statSync(path).size;
  }
  return total;
}

const { files, bytes } = tree();
const readFile = workspaceTools().find((tool) => tool.name === 'read_file');

async function sessionfs() {
  const dir = join(base, 'sessionfs');
  const store = localSessionStore({ dir });
  const session = await createSession({ store, sessionId: 'big' });
  let start = performance.now();
  await session.filesystem.writeFiles(files.map(([path, content]) => ({ kind: 'file', path, content: Buffer.from(content) })));
  await session.publish();
  const firstPublishMs = performance.now() - start;
  const publishes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let i = 0; i < 10; i += 1) await session.filesystem.write(files[(round * 37 + i * 997) % FILES][0], `changed ${round} ${i}\n`);
    start = performance.now();
    await session.publish();
    publishes.push(performance.now() - start);
  }
  await session.dispose();
  const resumes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    start = performance.now();
    const resumed = await createSession({ store: localSessionStore({ dir }), sessionId: 'big' });
    const result = await resumed.runTool(readFile, { path: files[round * 11][0] });
    resumes.push(performance.now() - start);
    if (!result.success) throw new Error(result.message);
    await resumed.dispose();
  }
  const many = join(base, 'sessionfs-10');
  const manyStore = localSessionStore({ dir: many });
  for (let n = 0; n < 10; n += 1) {
    const copy = await createSession({ store: manyStore, sessionId: `copy-${n}` });
    await copy.filesystem.writeFiles(files.map(([path, content]) => ({ kind: 'file', path, content: Buffer.from(content) })));
    await copy.dispose();
  }
  return {
    firstPublishMs: round(firstPublishMs),
    publish10ChangedMs: round(median(publishes)),
    resumeAndFirstReadMs: round(median(resumes)),
    tenSessionsStoreBytesOverTreeBytes: round(apparentBytes(many) / bytes, 3),
  };
}

async function agentfs() {
  let AgentFS;
  try {
    ({ AgentFS } = await import('agentfs-sdk'));
  } catch {
    return { skipped: 'agentfs-sdk is not installed (npm i --no-save agentfs-sdk to compare)' };
  }
  const path = join(base, 'agentfs', 'big.db');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(base, 'agentfs'), { recursive: true });
  let agent = await AgentFS.open({ path });
  let start = performance.now();
  for (const [file, content] of files) await agent.fs.writeFile(`/${file}`, content);
  const firstWriteMs = performance.now() - start;
  const writes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    start = performance.now();
    // AgentFS writes through to SQLite: its "publish" is the 10 writes themselves.
    for (let i = 0; i < 10; i += 1) await agent.fs.writeFile(`/${files[(round * 37 + i * 997) % FILES][0]}`, `changed ${round} ${i}\n`);
    writes.push(performance.now() - start);
  }
  await agent.close();
  const resumes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    start = performance.now();
    agent = await AgentFS.open({ path });
    await agent.fs.readFile(`/${files[round * 11][0]}`, 'utf8');
    resumes.push(performance.now() - start);
    await agent.close();
  }
  // One database per session: AgentFS shares nothing between them, so 10 sessions hold 10 copies of this one.
  let oneBytes = 0;
  for (const name of readdirSync(join(base, 'agentfs')))
    if (name.startsWith('big.db')) oneBytes += statSync(join(base, 'agentfs', name)).size;
  const tenBytes = 10 * oneBytes;
  return {
    firstWriteMs: round(firstWriteMs),
    write10ChangedMs: round(median(writes)),
    resumeAndFirstReadMs: round(median(resumes)),
    tenSessionsStoreBytesOverTreeBytes: round(tenBytes / bytes, 3),
  };
}

try {
  const ours = await sessionfs();
  const theirs = await agentfs();
  const limits = { publish10ChangedMs: 20, resumeAndFirstReadMs: 100, tenSessionsStoreBytesOverTreeBytes: 1.1 };
  const over = Object.entries(limits).filter(([key, limit]) => ours[key] > limit);
  console.log(
    JSON.stringify({ files: FILES, treeBytes: bytes, sessionfs: ours, agentfs: theirs, limits, withinLimits: over.length === 0 }, null, 2),
  );
  if (over.length > 0) process.exitCode = 1;
} finally {
  rmSync(base, { recursive: true, force: true });
}
