// The signals that stop what a command runs, installed one way: Ctrl-C (SIGINT), SIGTERM (teardown,
// a service manager) and SIGHUP (the terminal closed). The first asks for a clean stop; a later one
// (Ctrl-C again) means "now": escalate (SIGKILL without waiting out the grace).

export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Calls `on` for every stop signal until the returned function removes the handlers. */
export function onStopSignals(on: (signal: NodeJS.Signals) => void): () => void {
  // One handler per signal, naming it: process.emit('SIGINT') in a test passes no name.
  const handlers = STOP_SIGNALS.map((s) => [s, () => on(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  return () => {
    for (const [s, h] of handlers) process.off(s, h);
  };
}

/**
 * First signal: `stop`; any later one: `escalate`. `stopping` says whether a stop is under way
 * already for another reason (a failure stopping the run): then the first signal escalates too.
 */
export function stopThenEscalate(h: { stop(s: NodeJS.Signals): void; escalate(s: NodeJS.Signals): void; stopping?: () => boolean }): () => void {
  let asked = false;
  return onStopSignals((s) => {
    if (asked || h.stopping?.()) h.escalate(s);
    else h.stop(s);
    asked = true;
  });
}
