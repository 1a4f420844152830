// Timing shared by the benches that compare sessionfs with another tool side by side.
import { performance } from 'node:perf_hooks';

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Runs `task` once to warm up (JIT, page cache), then `rounds` times: the median ms and the last output.
 * `before`, when given, runs untimed before each run (to put back what the task changes).
 */
export async function time(task, rounds, before) {
  let output;
  const samples = [];
  for (let i = -1; i < rounds; i += 1) {
    if (before !== undefined) await before();
    const start = performance.now();
    output = await task();
    if (i >= 0) samples.push(performance.now() - start);
  }
  return { ms: median(samples), output };
}
