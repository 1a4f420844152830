import { describe, expect, it } from 'vitest';
import { KeyedMutex, runLocked } from '../../src/workspace/locks.js';

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

const turns = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('runLocked (the per-path locks of bulk writes and moves)', () => {
  it('holds every key at once: later callers on any of them wait, in the order they came, and nothing deadlocks', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const first = deferred();
    const holding = runLocked(mutex, ['a', 'b', 'c'], async () => {
      log.push('abc start');
      await first.promise;
      log.push('abc end');
    });
    // Opposite orders and overlaps: each waits for the holder of its keys, never for one another in a cycle.
    const later = [
      runLocked(mutex, ['c', 'a'], async () => void log.push('ca')),
      runLocked(mutex, ['b'], async () => void log.push('b')),
      runLocked(mutex, ['a', 'c', 'b'], async () => void log.push('acb')),
      runLocked(mutex, ['z', 'y'], async () => void log.push('zy')),
    ];
    await turns();
    expect(log).toEqual(['abc start', 'zy']);
    first.resolve();
    await Promise.all([holding, ...later]);
    const at = (entry: string) => log.indexOf(entry);
    expect(log).toHaveLength(6);
    // `ca` and `b` share no key: either may go first once `abc` is done; `acb` needs both done.
    expect(Math.min(at('ca'), at('b'))).toBeGreaterThan(at('abc end'));
    expect(at('acb')).toBeGreaterThan(Math.max(at('ca'), at('b')));
  });

  it('releases every key when the task fails, and the error is the caller’s', async () => {
    const mutex = new KeyedMutex();
    await expect(
      runLocked(mutex, ['a', 'b'], async () => {
        throw new Error('failed');
      }),
    ).rejects.toThrow('failed');
    const ran: string[] = [];
    await runLocked(mutex, ['b', 'a'], async () => void ran.push('after'));
    expect(ran).toEqual(['after']);
  });
});
