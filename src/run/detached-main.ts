import type { DetachedOptions } from './detached.js';
import type { UpEvent } from './events.js';
import type { SupervisorOptions, SupervisorResult } from './supervisor.js';
import { endedWords } from './ended.js';

// The background supervisor of `up --detach` (started by detached.ts, in its own session, output
// to runs/<id>/supervisor.log). It starts and supervises the run exactly as a foreground `up`
// does, relays its events while the foreground listens, and once ready keeps watching: a process
// that dies is recorded in run.json (exit code, signal, time, diagnosis) and the run becomes
// `degraded`. It waits on events only (child exits, signals). teardown stops it with SIGTERM like
// any live supervisor. The foreground going away before ready (killed, its terminal closed)
// interrupts the start: everything is stopped.
// The process and the Supervisor come from detached-entry.ts (the module forked), so that a unit
// test drives this logic in process with a fake channel and a faked supervisor.

type ToChild = { t: 'start'; o: DetachedOptions } | { t: 'stop'; signal: string } | { t: 'escalate'; signal?: NodeJS.Signals };

/** What of its own process the background supervisor uses: the IPC channel to the foreground and its output. */
export interface DetachedHost {
  readonly connected: boolean;
  send?: (m: unknown, handle: undefined, options: object, callback: (err: Error | null) => void) => boolean;
  disconnect(): void;
  on(event: 'message' | 'disconnect' | 'uncaughtException' | 'unhandledRejection', listener: (...args: any[]) => void): unknown;
  once(event: 'message', listener: (m: unknown) => void): unknown;
  readonly stdout: { write(s: string): unknown };
  readonly stderr: { write(s: string): unknown };
  exitCode?: number | string | undefined;
}

/** The part of the Supervisor this process drives. */
export interface DetachedSupervisor {
  on(event: 'event' | 'warning', listener: (e: any) => void): unknown;
  run(): Promise<SupervisorResult>;
  stop(signal: string): Promise<void>;
  escalate(by?: NodeJS.Signals): void;
  crash(err: unknown): Promise<void>;
}
export type MakeSupervisor = (o: SupervisorOptions) => DetachedSupervisor;

const stamp = () => new Date().toISOString();

/**
 * To the foreground, while it listens. A send that fails (the foreground let go at ready or was
 * killed: EPIPE) is reported to the callback, never as an uncaught error that would stop the run.
 */
function send(host: DetachedHost, m: object): void {
  if (!host.connected || !host.send) return;
  try {
    host.send(m, undefined, {}, () => {});
  } catch {
    // the foreground is gone: nobody to tell
  }
}

/** One line in supervisor.log per thing worth knowing later; never a quote of a process's log. */
function note(host: DetachedHost, e: UpEvent): void {
  if (e.event === 'exited') {
    const how = endedWords(e, 'omit');
    host.stdout.write(`${stamp()} ${e.process} ${how}${e.afterReady ? ' after ready' : ''}${e.diagnosis ? ` (diagnosis: ${e.diagnosis.code})` : ''}\n`);
  } else if (e.event === 'ready' || e.event === 'stopped' || e.event === 'failed') {
    host.stdout.write(`${stamp()} ${e.event}${e.event === 'failed' ? `: ${e.reason.replace(/\s+/g, ' ')}` : ''}\n`);
  }
}

/** Supervises the run until it is stopped or fails; the exit code is the run's. */
export async function supervise(o: DetachedOptions, host: DetachedHost, make: MakeSupervisor): Promise<void> {
  const sup = make({ ...o, detach: true, watch: true });
  let ready = false;
  sup.on('event', (e: UpEvent) => {
    note(host, e);
    // The foreground lets go at ready: nobody listens to what follows (supervisor.log has it).
    if (!ready) send(host, { t: 'event', e });
    if (e.event === 'ready') ready = true;
  });
  sup.on('warning', (w: string) => {
    host.stderr.write(`${stamp()} warning: ${w}\n`);
    if (!ready) send(host, { t: 'warning', w });
  });
  host.on('message', (raw) => {
    const m = raw as ToChild;
    if (m.t === 'stop') void sup.stop(m.signal);
    else if (m.t === 'escalate') sup.escalate(m.signal);
  });
  // The foreground gone before ready (SIGKILLed, a CI timeout): nobody asked for a half-started run.
  host.on('disconnect', () => {
    if (!ready) void sup.stop('SIGHUP');
  });
  // Dying of a bug would leave every worker running and holding the GPU: stop them first.
  const lastResort = (err: unknown) => void sup.crash(err);
  host.on('uncaughtException', lastResort);
  host.on('unhandledRejection', lastResort);
  const result: SupervisorResult = await sup.run();
  // The result reaches the foreground before we go (a send is queued, not written at once).
  await new Promise<void>((done) => {
    if (!host.connected || !host.send) return done();
    try {
      host.send({ t: 'result', r: result }, undefined, {}, () => done());
    } catch {
      done();
    }
  });
  if (host.connected) host.disconnect();
  host.exitCode = result.code;
}

/** Waits for the foreground's options ({ t: 'start' }), then supervises. */
export function listen(host: DetachedHost, make: MakeSupervisor): void {
  host.once('message', (raw) => {
    const m = raw as ToChild;
    if (m.t === 'start') void supervise(m.o, host, make);
  });
}
