import { Box, Static, Text, render, type Instance } from 'ink';
import { useEffect, useState } from 'react';
import type { Plan } from '../plan/types.js';
import type { UpEvent } from '../run/events.js';
import { FRAMES, StopRow, UpProcessRow } from './up-process-row.js';
import {
  formatExitNotice, formatFailureReport, formatInterrupted, formatPlanSummary, formatPreflightFailures, formatReady, formatRunLine, formatHintNote,
} from './up-report.js';
import { finalText, newMemory, type UpRenderer } from './up-plain.js';
import { formatElapsed, initialState, reduce, type UpViewState } from './up-state.js';
import { truncateWords } from './fit.js';

// The live view of `up` on a terminal. Only what changes lives in ink's redrawn region (a spinner
// line during preflight, one row per process, the stop countdown); it is never taller than the
// process list, so ink never clears the screen. Everything final (the plan, the ready summary, the
// failure report, the stop line) is printed as plain text after the live region is gone: the
// terminal soft-wraps it, so a copied command or path comes out whole, and it ends in a newline.
// Between live phases nothing is mounted: an idle, ready run draws nothing and costs no CPU.

type Listener = (e: UpEvent) => void;

export interface UpViewProps {
  plan: Plan;
  columns: number;
  /** Events so far (the initial state is folded from them). */
  history: UpEvent[];
  /** Subscribes to supervisor events after the first `from` of the history; returns an unsubscribe. */
  subscribe: (on: Listener, from: number) => () => void;
  /** Finished blocks printed once above the live rows (ink's <Static>), e.g. preflight warnings. */
  mode: 'start' | 'stop';
}

/** The live region: the preflight spinner, then a row per process; while stopping, the countdowns. */
export function UpView({ plan, columns, history, subscribe, mode }: UpViewProps) {
  // Folded at once: the first frame already knows what is stopping (nothing is printed twice).
  const [from] = useState(() => history.length);
  const [state, setState] = useState<UpViewState>(() => history.slice(0, from).reduce((s, e) => reduce(s, e), initialState(plan)));
  const [tick, setTick] = useState(0);
  useEffect(() => subscribe((e) => setState((s) => reduce(s, e)), from), [subscribe, from]);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 120);
    return () => clearInterval(t);
  }, []);
  const now = Date.now();
  const nameWidth = Math.max(...state.rows.map((r) => r.name.length));
  if (mode === 'stop') {
    const killAt = state.killAt ?? now;
    // Finished rows print once (<Static>) in the order they finish; the rest count down below.
    // <Static> prints only indexes it has not printed yet, so its list is the finishing order
    // (append-only), never the rows filtered in table order.
    const byName = new Map(state.rows.map((r) => [r.name, r]));
    const finished = state.finished.map((n) => byName.get(n)!);
    const live = state.rows.filter((r) => !state.finished.includes(r.name));
    return (
      <>
        <Static items={finished}>
          {(r) => <StopRow key={r.name} row={r} nameWidth={nameWidth} frame={0} now={now} killAt={killAt} columns={columns} />}
        </Static>
        <Box flexDirection="column">
          {live.map((r) => <StopRow key={r.name} row={r} nameWidth={nameWidth} frame={tick} now={now} killAt={killAt} columns={columns} />)}
          {live.length > 0 ? <Text dimColor wrap="truncate-end">{truncateWords('press Ctrl-C again to SIGKILL now', columns)}</Text> : null}
        </Box>
      </>
    );
  }
  if (!state.started) {
    const p = state.preflightProgress;
    const what = p && p.pending.length ? p.pending.join(', ') : 'starting checks';
    const line = `preflight: ${what} ${formatElapsed(now - state.preflightSince)}${p ? ` (${p.done}/${p.total} done)` : ''}`;
    return (
      <Text wrap="truncate-end">
        <Text color="cyan">{FRAMES[tick % FRAMES.length]} </Text>
        {truncateWords(line, columns - 2)}
      </Text>
    );
  }
  return (
    <Box flexDirection="column">
      {state.rows.map((row) => (
        <UpProcessRow key={row.name} row={row} nameWidth={nameWidth} frame={tick} now={now} columns={columns} />
      ))}
    </Box>
  );
}

/**
 * The interactive renderer: mounts a live region per phase and prints final text between them.
 * Events that arrive before a region subscribes are replayed to it.
 */
export function mountUpView(plan: Plan, runId: string, stdout: NodeJS.WriteStream): UpRenderer {
  void runId;
  const columns = () => Math.max(20, stdout.columns ?? 100);
  const history: UpEvent[] = [];
  const listeners = new Set<Listener>();
  const subscribe = (on: Listener, from: number) => {
    for (const e of history.slice(from)) on(e);
    listeners.add(on);
    return () => {
      listeners.delete(on);
    };
  };
  const mem = newMemory(plan);
  let app: Instance | null = null;
  let unmounting: Promise<void> = Promise.resolve();
  // Writes wait for the live region to be gone, in order.
  let queue: Promise<void> = Promise.resolve();
  const later = (f: () => void) => {
    queue = queue.then(() => unmounting).then(f);
  };
  const write = (text: string) => later(() => void stdout.write(text));
  const mount = (mode: 'start' | 'stop') => later(() => {
    app = render(<UpView plan={plan} columns={columns()} history={history} subscribe={subscribe} mode={mode} />,
      // exitOnCtrlC off: Ctrl-C is the supervisor's signal to stop every process cleanly.
      { stdout, exitOnCtrlC: false, patchConsole: false });
  });
  /** `clear`: erase the live region (a spinner line says nothing once it is over). */
  const unmount = (clear = false) => later(() => {
    const a = app;
    app = null;
    if (!a) return;
    // ink draws at most every ~33 ms: let the last state (a row turning ready) reach the screen.
    unmounting = new Promise<void>((r) => setTimeout(r, 40)).then(() => {
      // An empty last frame, not clear(): unmount draws the final frame again, and after clear()
      // that put a spinner line back (over the plan summary) about one time in four.
      if (clear) a.rerender(<></>);
      a.unmount();
      return a.waitUntilExit().then(() => undefined, () => undefined);
    });
  });

  let ready = false;
  const readyNotes: { process: string; text: string }[] = [];
  /** Processes whose death after ready was said as it came (its notice ends the run). */
  const told = new Set<string>();
  let started = false;
  return {
    onEvent(e) {
      if (e.event !== 'line') history.push(e);
      for (const l of listeners) l(e);
      switch (e.event) {
        case 'plan':
          write(formatPlanSummary(e.plan, { columns: columns(), fancy: true }));
          break;
        case 'preflight-progress':
          if (!app && !started) mount('start');
          break;
        case 'preflight':
          if (!e.ok || e.checks.some((c) => c.status === 'warn' || c.status === 'fail')) {
            unmount(true);
            write(formatPreflightFailures(e, columns()));
            if (e.ok) mount('start');
          }
          break;
        case 'run':
          started = true;
          unmount(true);
          write(formatRunLine(e, columns()));
          mount('start');
          break;
        case 'starting':
          mem.logs[e.process] = e.log;
          break;
        case 'hint':
          // Said in full at ready: the row has room for its first words only.
          if (e.code === 'kv_diagnostics_unlogged') readyNotes.push(e);
          // up --restart after ready (the view is gone): each restart and its outcome, wrapped.
          else if (ready && e.code === 'restart.on-failure') write(formatHintNote(e.process, e.text, columns()));
          break;
        case 'ready':
          ready = true;
          unmount();
          write(formatReady(e, mem.plan, { columns: columns(), fancy: true }));
          for (const n of readyNotes.splice(0)) write(formatHintNote(n.process, n.text, columns()));
          break;
        case 'exited':
          mem.exited.set(e.process, e);
          if (ready) {
            write(formatExitNotice(e, columns()));
            if (!e.restart) told.add(e.process);
          }
          break;
        case 'failed':
          mem.failed = e;
          if (e.process === null && Object.keys(mem.logs).length === 0) {
            unmount(true);
            write(formatFailureReport(e, null, { columns: columns() }));
          }
          break;
        case 'interrupted':
          // The spinner says nothing any more: erase it, then say what was cut short.
          unmount(true);
          write(formatInterrupted(e, columns()));
          break;
        case 'stopping':
          mem.stopping = e;
          unmount();
          // The terminal echoed ^C on the current line: start below it.
          // The death that ends the run was said when it came (after ready): not twice.
          write(mem.failed ? (mem.failed.process !== null && told.has(mem.failed.process) ? '' : formatExitLine(mem)) : e.reason === 'teardown' ? `stopping: asked by dynamo-dev teardown (${e.by}) from another terminal\n` : '\n');
          mount('stop');
          break;
        case 'stopped':
          unmount();
          write(finalText(mem, e, columns(), true));
          break;
        default:
          break;
      }
    },
    async close() {
      unmount();
      await queue;
      await unmounting;
    },
  };
}

function formatExitLine(mem: ReturnType<typeof newMemory>): string {
  const f = mem.failed!;
  const ex = f.process ? mem.exited.get(f.process) : undefined;
  return ex ? formatExitNotice(ex) : `✗ ${f.reason}; stopping the others\n`;
}

