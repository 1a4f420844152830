/**
 * The flushes of the open JSONL audit sinks, run on SIGINT and SIGTERM: a process stopped by either (Ctrl-C,
 * a container stop, a supervisor) keeps the events it had queued. Node writes nothing on those signals by
 * itself ('exit' is not emitted when a signal ends the process).
 *
 * How the process ends is not changed. A listener on a signal replaces Node's default (to end the process),
 * so when the listener installed here is the only one, it removes itself and raises the signal again: the
 * process ends by that signal, as it would have without a sink (its parent sees `signal === 'SIGTERM'`).
 * When the program has its own listeners, they decide what the signal does, as they did before: the sinks
 * are flushed and nothing else happens here. The listener is put first, so that the program's listeners
 * (even `once` ones, which remove themselves when called) are still counted when it runs; it is removed
 * when the last sink closes.
 */
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

const flushes = new Set<() => void>();

function onSignal(signal: NodeJS.Signals): void {
  for (const flush of flushes) {
    try {
      flush();
    } catch {
      // A sink that cannot write reports it on its next event; the others still flush.
    }
  }
  if (process.listenerCount(signal) > 1) return;
  process.off(signal, onSignal);
  process.kill(process.pid, signal);
}

/** Runs `flush` on SIGINT and SIGTERM until the function returned is called. */
export function flushOnSignals(flush: () => void): () => void {
  if (flushes.size === 0) for (const signal of SIGNALS) process.prependListener(signal, onSignal);
  flushes.add(flush);
  return () => {
    if (!flushes.delete(flush) || flushes.size > 0) return;
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
}
