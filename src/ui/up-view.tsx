import { Box, Text, render } from 'ink';
import { useEffect, useState } from 'react';
import type { Plan } from '../plan/types.js';
import type { UpEvent } from '../run/events.js';
import { UpProcessRow } from './up-process-row.js';
import { formatExited, formatFailed, formatPreflightFailures, formatReady, formatStopped } from './up-report.js';
import { initialState, reduce } from './up-state.js';
import type { UpRenderer } from './up-plain.js';

export interface UpViewProps {
  plan: Plan;
  runId: string;
  columns: number;
  /** Subscribes to supervisor events; returns an unsubscribe. */
  subscribe: (on: (e: UpEvent) => void) => () => void;
}

/** The live view of `up` on a TTY: one row per process, then the summary or the failure report. */
export function UpView({ plan, runId, columns, subscribe }: UpViewProps) {
  const [state, setState] = useState(() => initialState(plan));
  const [tick, setTick] = useState(0);
  useEffect(() => subscribe((e) => setState((s) => reduce(s, e))), [subscribe]);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 120);
    return () => clearInterval(t);
  }, []);
  const nameWidth = Math.max(...state.rows.map((r) => r.name.length));
  const lineWidth = Math.max(10, columns - nameWidth - 48);
  const now = Date.now();
  const seen = new Set(state.exited.map((e) => e.process));
  return (
    <Box flexDirection="column">
      {state.preflight && state.preflight.checks.some((c) => c.status === 'fail' || c.status === 'warn')
        ? <Text>{formatPreflightFailures(state.preflight).trimEnd()}</Text>
        : null}
      <Text bold>
        up {plan.recipe} <Text dimColor>· {plan.model} · run {runId}</Text>
      </Text>
      {state.rows.map((row) => (
        <UpProcessRow key={row.name} row={row} nameWidth={nameWidth} frame={tick} now={now} lineWidth={lineWidth} />
      ))}
      {state.ready ? <Text>{formatReady(state.ready).trimEnd()}</Text> : null}
      {state.exited.map((e) => <Text key={`x-${e.process}`}>{formatExited(e).trimEnd()}</Text>)}
      {state.failed ? <Text>{formatFailed(state.failed, state.failed.process !== null && seen.has(state.failed.process)).trimEnd()}</Text> : null}
      {state.stopped ? <Text>{formatStopped(state.stopped).trimEnd()}</Text> : null}
    </Box>
  );
}

/** Mounts the view; the renderer feeds it events and unmounts it on close. */
export function mountUpView(plan: Plan, runId: string, stdout: NodeJS.WriteStream): UpRenderer {
  const listeners = new Set<(e: UpEvent) => void>();
  // Events that arrive before the first effect subscribes are replayed to it.
  const history: UpEvent[] = [];
  const subscribe = (on: (e: UpEvent) => void) => {
    for (const e of history) on(e);
    listeners.add(on);
    return () => {
      listeners.delete(on);
    };
  };
  // exitOnCtrlC off: Ctrl-C is the supervisor's signal to stop every process cleanly.
  const app = render(<UpView plan={plan} runId={runId} columns={stdout.columns ?? 100} subscribe={subscribe} />,
    { stdout, exitOnCtrlC: false, patchConsole: false });
  return {
    onEvent(e) {
      if (e.event !== 'line') history.push(e);
      for (const l of listeners) l(e);
    },
    async close() {
      await new Promise((r) => setTimeout(r, 30));
      app.unmount();
      await app.waitUntilExit();
    },
  };
}
