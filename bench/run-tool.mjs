#!/usr/bin/env node
// The overhead of session.runTool in a 10,000-file workspace: what a call costs beyond its handler (zod
// validation, the snapshot before it, the call-scoped view, history) and what a failed call costs to roll
// back (restore). Memory and host (scan and tracked change detection), each measured against the same
// handler called directly on the workspace. Prints one JSON document. Goals: memory < 0.1 ms per call,
// host < 10 ms. Usage: node bench/run-tool.mjs [files] [calls]   (after `npm run build`)
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { createSession, defineTool } from '../dist/src/index.js';

const FILES = Number(process.argv[2] ?? 10_000);
const CALLS = Number(process.argv[3] ?? 200);

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-run-tool-')));
const source = join(scratch, 'project');
for (let i = 0; i < FILES; i += 1) {
  const dir = join(source, `pkg${Math.floor(i / 1000)}`, `mod${Math.floor(i / 100) % 10}`);
  if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(join(dir, `file${i}.ts`), `export const value${i} = ${i};\n`);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value) => Math.round(value * 1000) / 1000;

const noop = defineTool({
  name: 'noop',
  description: 'reads nothing, writes nothing',
  parameters: z.object({ n: z.number() }),
  handler: () => ({ success: true, message: 'ok' }),
});
const edit = defineTool({
  name: 'edit',
  description: 'writes one file',
  parameters: z.object({ n: z.number(), fail: z.boolean() }),
  async handler({ n, fail }, { filesystem }) {
    await filesystem.write(`project/pkg0/mod0/file${n % 100}.ts`, `export const value = ${n};\n`);
    return { success: !fail, message: fail ? 'failed on purpose' : 'edited' };
  },
});

/** Median ms per call of `run(i)`, after a warm-up. */
async function perCall(run) {
  for (let i = 0; i < 20; i += 1) await run(i);
  const times = [];
  for (let i = 0; i < CALLS; i += 1) {
    const start = performance.now();
    await run(i);
    times.push(performance.now() - start);
  }
  return median(times);
}

async function measure(backend, changeDetection) {
  const session = await createSession({
    backend,
    sources: [{ hostPath: source }],
    allowedHostRoots: [scratch],
    ...(changeDetection === undefined ? {} : { changeDetection }),
  });
  try {
    // The first snapshot after hydration (the host backend hashes what it has not seen yet).
    let start = performance.now();
    await session.runTool(noop, { n: 0 });
    const firstCallMs = performance.now() - start;
    const ws = session.filesystem;
    const direct = await perCall((i) => edit.handler({ n: i, fail: false }, { filesystem: ws, session }));
    const noopMs = await perCall((i) => session.runTool(noop, { n: i }));
    const success = await perCall((i) => session.runTool(edit, { n: i, fail: false }));
    const failure = await perCall(async (i) => {
      const result = await session.runTool(edit, { n: i, fail: true });
      if (!result.rolledBack) throw new Error('expected a rollback');
    });
    start = performance.now();
    await session.rollbackTo(session.snapshots[0]);
    const rollbackToFirstMs = performance.now() - start;
    return {
      firstCallAfterHydrationMs: round(firstCallMs),
      directHandlerMs: round(direct),
      noopCallMs: round(noopMs),
      writeCallMs: round(success),
      overheadPerCallMs: round(success - direct),
      failedCallWithRestoreMs: round(failure),
      rollbackOverheadMs: round(failure - direct),
      rollbackToFirstSnapshotMs: round(rollbackToFirstMs),
      historyEntries: session.calls.length,
    };
  } finally {
    await session.dispose();
  }
}

const results = {
  bench: 'run-tool',
  files: FILES,
  callsPerFigure: CALLS,
  memory: { ...(await measure('memory')), goal: '< 0.1 ms per call' },
  // createSession's default for the temp root it owns.
  hostTracked: { ...(await measure('host', 'tracked')), goal: '< 10 ms per call' },
  // The default for a root the caller gives (anyone may write it): every snapshot lstat-scans the tree.
  hostScan: { ...(await measure('host', 'scan')), goal: '< 10 ms per call' },
};
console.log(JSON.stringify(results, null, 2));
fs.rmSync(scratch, { recursive: true, force: true });
