import type { DetachedOptions } from './detached.js';
import type { UpEvent } from './events.js';
import { Supervisor, type SupervisorResult } from './supervisor.js';

// The background supervisor of `up --detach` (started by detached.ts, in its own session, output
// to runs/<id>/supervisor.log). It starts and supervises the run exactly as a foreground `up`
// does, relays its events while the foreground listens, and once ready keeps watching: a process
// that dies is recorded in run.json (exit code, signal, time, diagnosis) and the run becomes
// `degraded`. It waits on events only (child exits, signals). teardown stops it with SIGTERM like
// any live supervisor. The foreground going away before ready (killed, its terminal closed)
// interrupts the start: everything is stopped.

type ToChild = { t: 'start'; o: DetachedOptions } | { t: 'stop'; signal: string } | { t: 'escalate' };

const stamp = () => new Date().toISOString();

/**
 * To the foreground, while it listens. A send that fails (the foreground let go at ready or was
 * killed: EPIPE) is reported to the callback, never as an uncaught error that would stop the run.
 */
function send(m: object): void {
  if (!process.connected || !process.send) return;
  try {
    process.send(m, undefined, {}, () => {});
  } catch {
    // the foreground is gone: nobody to tell
  }
}

/** One line in supervisor.log per thing worth knowing later; never a quote of a process's log. */
function note(e: UpEvent): void {
  if (e.event === 'exited') {
    const how = e.error ? `could not be started` : e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`;
    process.stdout.write(`${stamp()} ${e.process} ${how}${e.afterReady ? ' after ready' : ''}${e.diagnosis ? ` (diagnosis: ${e.diagnosis.code})` : ''}\n`);
  } else if (e.event === 'ready' || e.event === 'stopped' || e.event === 'failed') {
    process.stdout.write(`${stamp()} ${e.event}${e.event === 'failed' ? `: ${e.reason.replace(/\s+/g, ' ')}` : ''}\n`);
  }
}

async function supervise(o: DetachedOptions): Promise<void> {
  const sup = new Supervisor({ ...o, detach: true, watch: true });
  let ready = false;
  sup.on('event', (e: UpEvent) => {
    note(e);
    // The foreground lets go at ready: nobody listens to what follows (supervisor.log has it).
    if (!ready) send({ t: 'event', e });
    if (e.event === 'ready') ready = true;
  });
  sup.on('warning', (w: string) => {
    process.stderr.write(`${stamp()} warning: ${w}\n`);
    if (!ready) send({ t: 'warning', w });
  });
  process.on('message', (raw) => {
    const m = raw as ToChild;
    if (m.t === 'stop') void sup.stop(m.signal);
    else if (m.t === 'escalate') sup.escalate();
  });
  // The foreground gone before ready (SIGKILLed, a CI timeout): nobody asked for a half-started run.
  process.on('disconnect', () => {
    if (!ready) void sup.stop('SIGHUP');
  });
  // Dying of a bug would leave every worker running and holding the GPU: stop them first.
  const lastResort = (err: unknown) => void sup.crash(err);
  process.on('uncaughtException', lastResort);
  process.on('unhandledRejection', lastResort);
  const result: SupervisorResult = await sup.run();
  // The result reaches the foreground before we go (a send is queued, not written at once).
  await new Promise<void>((done) => {
    if (!process.connected || !process.send) return done();
    try {
      process.send({ t: 'result', r: result }, undefined, {}, () => done());
    } catch {
      done();
    }
  });
  if (process.connected) process.disconnect();
  process.exitCode = result.code;
}

process.once('message', (raw) => {
  const m = raw as ToChild;
  if (m.t === 'start') void supervise(m.o);
});
