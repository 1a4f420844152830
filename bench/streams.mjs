#!/usr/bin/env node
// Streams a large file (default 1 GiB) into and out of the host backend through createWriteStream and
// createReadStream, side by side in one run with `cp` of the same file, and reports each direction's
// throughput and the process's peak RSS growth over its RSS before the phase (goal: <= 64 MiB, i.e.
// constant memory whatever the file size). Prints one JSON document.
// Usage: node bench/streams.mjs [sizeMiB]   (after `npm run build`)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { WritableStream } from 'node:stream/web';
import { clearInterval, setInterval } from 'node:timers';
import { round } from './_timing.mjs';
import { createWorkspace, hostDriver } from '../dist/src/index.js';

const SIZE_MIB = Number(process.argv[2] ?? 1024);
const SIZE = SIZE_MIB * 1024 * 1024;
const GOAL_MIB = 64;
const MiB = 1024 * 1024;

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-streams-')));
const source = join(scratch, 'source.bin');
const workspace = createWorkspace(hostDriver({ root: join(scratch, 'root'), gitDir: join(scratch, 'git') }));

/** Writes `SIZE` bytes of a non-constant pattern in 8 MiB blocks (never the whole file in memory). */
function makeSource() {
  const block = Buffer.alloc(8 * MiB);
  for (let i = 0; i < block.length; i += 1) block[i] = (i * 31 + (i >> 13)) & 0xff;
  const fd = fs.openSync(source, 'w');
  for (let written = 0; written < SIZE; written += block.length) fs.writeSync(fd, block, 0, Math.min(block.length, SIZE - written));
  fs.closeSync(fd);
}

/** Runs `task`, sampling RSS every 10 ms: seconds taken and the peak RSS growth over the RSS before it. */
async function measure(task) {
  globalThis.gc?.();
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  const start = performance.now();
  await task();
  const seconds = (performance.now() - start) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  return { seconds: round(seconds, 3), mibPerSecond: round(SIZE_MIB / seconds, 1), peakRssGrowthMiB: round((peak - before) / MiB, 1) };
}

function cp(from, to) {
  const start = performance.now();
  const result = spawnSync('cp', [from, to]);
  if (result.status !== 0) throw new Error(`cp failed: ${result.stderr}`);
  const seconds = (performance.now() - start) / 1000;
  return { seconds: round(seconds, 3), mibPerSecond: round(SIZE_MIB / seconds, 1) };
}

function sameFile(a, b) {
  return spawnSync('cmp', ['-s', a, b]).status === 0;
}

try {
  makeSource();
  const write = await measure(async () => {
    const sink = await workspace.createWriteStream('big.bin');
    await Readable.toWeb(fs.createReadStream(source, { highWaterMark: MiB })).pipeTo(sink);
  });
  const stored = join(workspace.root, 'big.bin');
  const writeExact = sameFile(source, stored);
  const out = join(scratch, 'out.bin');
  const read = await measure(async () => {
    const stream = await workspace.createReadStream('big.bin');
    // A sink that writes each chunk before taking the next (Node's Writable.toWeb adapter buffers ahead).
    const handle = await fs.promises.open(out, 'w');
    await stream.pipeTo(new WritableStream({ write: async (chunk) => void (await handle.write(chunk)), close: () => handle.close() }));
  });
  const readExact = sameFile(source, out);
  fs.rmSync(out);
  const cpIn = cp(source, join(workspace.root, 'cp.bin'));
  fs.rmSync(join(workspace.root, 'cp.bin'));
  const cpOut = cp(stored, out);
  fs.rmSync(out);
  console.log(
    JSON.stringify(
      {
        bench: 'streams',
        sizeMiB: SIZE_MIB,
        goal: `peak RSS growth <= ${GOAL_MIB} MiB in each direction`,
        createWriteStream: { ...write, exact: writeExact },
        createReadStream: { ...read, exact: readExact },
        cp: { into: cpIn, outOf: cpOut },
        ratioToCp: { write: round(write.seconds / cpIn.seconds, 2), read: round(read.seconds / cpOut.seconds, 2) },
        met: write.peakRssGrowthMiB <= GOAL_MIB && read.peakRssGrowthMiB <= GOAL_MIB && writeExact && readExact,
      },
      null,
      2,
    ),
  );
} finally {
  await workspace.dispose();
  fs.rmSync(scratch, { recursive: true, force: true });
}
