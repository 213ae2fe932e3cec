import { fork, type ChildProcess, type ForkOptions } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { UpEvent } from './events.js';
import { RUN_MARKER } from './run-scan.js';
import type { SupervisionOptions, SupervisorResult } from './supervisor.js';

// `up --detach` in the foreground: the supervisor runs in a process of its own, started in its
// own session, so that it is the parent of every process of the run and stays so after `up`
// exits. Only a parent learns its child's exit code and signal (waitpid); a supervisor that
// exited at ready (as `up --detach` did before) leaves nobody to record a worker's death, and the
// run would read `ready` while it serves with one worker fewer. The foreground relays the
// background's events to its renderer until ready, then lets go; a signal before ready is passed
// on as a stop (detached-main.ts). Protocol over the IPC channel, JSON:
//   to it:   { t: 'start', o: options } | { t: 'stop', signal } | { t: 'escalate', signal? }
//   from it: { t: 'event', e: UpEvent } | { t: 'warning', w } | { t: 'result', r: SupervisorResult }

export type DetachedOptions = SupervisionOptions;

/** What the foreground learns: ready (it then lets go), a stop or failure before ready, or the supervisor lost. */
export type DetachedResult = SupervisorResult | { outcome: 'lost'; code: 1; reason: string };

type FromChild = { t: 'event'; e: UpEvent } | { t: 'warning'; w: string } | { t: 'result'; r: SupervisorResult };

export interface DetachedHandle extends EventEmitter {
  readonly pid: number | null;
  readonly result: Promise<DetachedResult>;
  /** Resolves once the background supervisor has exited (after a stop or a failure before ready). */
  readonly exited: Promise<void>;
  /** A user stop before ready (Ctrl-C, SIGTERM, SIGHUP of the foreground). */
  stop(signal: string): void;
  /** SIGKILL now rather than at the grace deadline (a second Ctrl-C). */
  escalate(by?: NodeJS.Signals): void;
}

const ENTRY = fileURLToPath(new URL('./detached-entry.js', import.meta.url));

/** How the background process is started: node's fork; a unit test passes a fake child. */
export type ForkSupervisor = (module: string, args: string[], options: ForkOptions) => ChildProcess;

/**
 * Starts the background supervisor (stdout and stderr to `logFile`) and hands it the options.
 * Emits 'event' (UpEvent) and 'warning' (string) as they come.
 */
export function launchDetached(o: DetachedOptions, logFile: string, start: ForkSupervisor = fork): DetachedHandle {
  const fd = openSync(logFile, 'a', 0o600);
  let child: ChildProcess;
  try {
    // With the run's marker, as its processes: should its record become unreadable, teardown still finds it.
    const env = o.runMarker ? { ...o.env, [RUN_MARKER]: o.runMarker } : o.env;
    child = start(ENTRY, [], { detached: true, stdio: ['ignore', fd, fd, 'ipc'], env, execArgv: [], serialization: 'json' });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  const handle = new EventEmitter() as DetachedHandle;
  let settled = false;
  let resolve!: (r: DetachedResult) => void;
  const result = new Promise<DetachedResult>((r) => (resolve = r));
  // The first outcome counts: a promise resolves once, later calls change nothing.
  const settle = (r: DetachedResult) => {
    settled = true;
    resolve(r);
  };
  const send = (m: object) => {
    if (!child.connected) return false;
    try {
      child.send(m);
    } catch {
      return false;
    }
    return true;
  };
  child.on('message', (raw) => {
    const m = raw as FromChild;
    if (m.t === 'event') {
      handle.emit('event', m.e);
      if (m.e.event === 'ready') {
        // Ready: the run goes on under its own supervisor; the foreground lets go of it.
        child.disconnect();
        child.unref();
        settle({ outcome: 'detached', code: 0 });
      }
    } else if (m.t === 'warning') {
      handle.emit('warning', m.w);
    } else if (m.t === 'result') {
      settle(m.r);
    }
  });
  child.on('error', (err) => settle({ outcome: 'lost', code: 1, reason: `the supervisor could not be started: ${err.message}` }));
  // Its last messages arrive before the channel's 'disconnect'; 'exit' can come earlier than both.
  let ended: string | null = null;
  const lost = () => settle({ outcome: 'lost', code: 1, reason: `the supervisor ended before the run was ready${ended ? ` (${ended})` : ''}` });
  let markExited!: () => void;
  const exited = new Promise<void>((r) => (markExited = r));
  child.on('exit', (code, signal) => {
    ended = signal ? `killed by ${signal}` : `exit code ${code}`;
    markExited();
    if (!child.connected) lost();
  });
  // A channel that closes without a result: say how the supervisor ended when its exit follows
  // soon ('exit' calls lost() then), else say what is known.
  child.on('disconnect', () => setImmediate(() => {
    if (settled) return; // ready (we let go) or a result came: nothing to wait for
    if (ended !== null) lost();
    else setTimeout(lost, 1000);
  }));
  Object.defineProperties(handle, { pid: { value: child.pid ?? null }, result: { value: result }, exited: { value: exited } });
  handle.stop = (signal: string) => {
    if (!send({ t: 'stop', signal }) && child.pid) {
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  };
  handle.escalate = (by?: NodeJS.Signals) => {
    send({ t: 'escalate', ...(by ? { signal: by } : {}) });
  };
  send({ t: 'start', o });
  return handle;
}
