// Timing shared by the benches that compare sessionfs with another tool side by side.
import { performance } from 'node:perf_hooks';

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Runs `task` once to warm up (JIT, page cache), then `rounds` times: the median ms and the last output. */
export async function time(task, rounds) {
  let output;
  const samples = [];
  for (let i = -1; i < rounds; i += 1) {
    const start = performance.now();
    output = await task();
    if (i >= 0) samples.push(performance.now() - start);
  }
  return { ms: median(samples), output };
}
