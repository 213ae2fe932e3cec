import { isLocalModelPath } from '../host/hf/hf-paths.js';
import { isEmbeddedModel } from '../plan/embedded-model.js';
import { EventEmitter } from 'node:events';
import { DiskFullError } from '../errors.js';
import type { RunRecord, RunState } from './types.js';
import { supervisedRecord } from './run-record.js';
import type { UpEvent } from './events.js';
import type { StopHandle, StopSnapshot } from './stop.js';
import type { TimerHandle } from './clock.js';
import { RunWriter } from './run-writer.js';
import { runDir } from './paths.js';
import { recordBeforeSpawn } from './record-before-spawn.js';
import { realSupervisorDeps, type SupervisorDeps } from './supervisor-deps.js';
import { startable } from './policy/start-order.js';
import { modelErrorFailure } from './policy/failure.js';
import { LockWaits } from './lock-waits.js';
import { readyEvents } from './run-ready.js';
import { stopThenEscalate } from './signals.js';
import { RESTART_SIGNAL, type RestartEvent } from './restart-request.js';
import { ProcessLifecycle } from './process-lifecycle.js';
import { restartProcess, restartReady, takeRestartRequests, type RestartWhy } from './process-restart.js';
import { stopAll, stopForUser, TEARDOWN_ENDED } from './run-stop.js';
import { blame, onDeadline, onProcessExit } from './run-deaths.js';
import type { RunCore } from './run-core.js';
import { type Failure, type RestartDone, type SupervisorOptions, type SupervisorResult } from './supervisor-types.js';

export { TEARDOWN_ENDED };
export type { RestartDone, SupervisionOptions, SupervisorOptions, SupervisorResult } from './supervisor-types.js';

// One run, as a coordinator: its processes (process-lifecycle.ts, one each) started in plan order
// (policy/start-order), the run ready once every one is, its deadline, its state in run.json
// (rewritten after every change, so status and teardown find everything even if we are killed with
// SIGKILL), the signals and `dynamo-dev restart`'s requests (the detached IPC is detached-main.ts).
// What a death means is run-deaths.ts, a restart process-restart.ts, the stop run-stop.ts. The
// machine comes in as SupervisorDeps (supervisor-deps.ts).
//
// Emits 'event' (UpEvent), 'warning' (string) and 'stop-progress' (StopSnapshot, while stopping).

export class Supervisor extends EventEmitter implements RunCore {
  readonly record: RunRecord;
  readonly d: SupervisorDeps;
  readonly procs: ProcessLifecycle[];
  readonly abort = new AbortController();
  readonly writer: RunWriter;
  readonly marker: string;
  finishing = false;
  everReady = false;
  watching = false;
  escalated = false;
  escalatedBy: NodeJS.Signals | undefined;
  stopHandle: StopHandle | null = null;
  stopWhy: RunCore['stopWhy'] = { reason: 'failure', by: null };
  private deadline: TimerHandle | null = null;
  private refresh: TimerHandle | null = null;
  private lockProbe: TimerHandle | null = null;
  private readonly locks: LockWaits;
  private readonly t0: number;
  private resolveDone!: (r: SupervisorResult) => void;
  private readonly done = new Promise<SupervisorResult>((r) => (this.resolveDone = r));
  private readonly offSignals: (() => void)[] = [];

  constructor(readonly o: SupervisorOptions, deps: Partial<SupervisorDeps> = {}) {
    super();
    this.d = { ...realSupervisorDeps(), ...deps };
    this.t0 = this.d.clock.now();
    this.marker = o.runMarker ?? runDir(o.stateDir, o.runId);
    const env = { plan: o.plan, stateDir: o.stateDir, runId: o.runId, env: o.env, marker: this.marker, pollMs: o.pollMs ?? 50, followPollMs: o.followPollMs ?? 1000, d: this.d };
    this.procs = o.plan.processes.map((spec) => {
      const p: ProcessLifecycle = new ProcessLifecycle(spec, env, {
        event: (e) => this.emitEvent(e),
        persist: () => this.writer.persist(),
        writeNow: () => this.writer.writeNow(),
        gateOpened: () => this.startEligible(),
        lockWait: (w) => this.locks.said(p, w),
        // The frontend cannot load the model and retries forever: the start fails now, naming the file (not at the deadline, blaming a worker).
        modelError: (error) => void (this.everReady ? undefined : this.fail({ ...modelErrorFailure(p.name, error), diagnosis: null })),
        ready: () => this.onReady(p),
        exited: (info) => void onProcessExit(this, p, info),
        running: () => !this.finishing,
      }, this.abort.signal);
      return p;
    });
    this.record = supervisedRecord(o, this.d.self, this.procs.map((p) => p.rec));
    this.writer = new RunWriter(this.record, (rec) => this.d.writeRun(o.stateDir, rec), (w) => this.warn(w), (err) => this.diskFull(err));
    this.locks = new LockWaits(this, o.lockSilentMs ?? 2000);
  }

  /** A listener that throws (a renderer on a dead terminal) must never stop supervision. */
  emitEvent(e: UpEvent): void {
    try {
      this.emit('event', e);
    } catch (err) {
      try {
        this.warn(`cannot show the ${e.event} event: ${(err as Error)?.message ?? String(err)}`);
      } catch {
        // nowhere left to say it
      }
    }
  }

  warn(text: string): void {
    this.emit('warning', text);
  }

  /** A full disk, said once: coming up, the pid just started is on no record, so the start fails. */
  private diskFull(err: DiskFullError): void {
    if (this.everReady || this.finishing) return this.warn(`cannot write run.json: ${err.message}`);
    void this.fail({ reason: `${err.message}; stopping what was started`, process: null, diagnosis: null });
  }

  stopProgress(snap: StopSnapshot): void {
    this.emit('stop-progress', snap);
    this.emitEvent({ event: 'stop-progress', killInMs: snap.killInMs, targets: snap.targets });
  }

  frontend(): ProcessLifecycle | undefined {
    return this.procs.find((q) => q.spec.role === 'frontend');
  }

  /**
   * Last resort for an error nothing else caught (up installs it for uncaught exceptions and
   * rejections): stop every process we started rather than die and leave them running.
   */
  async crash(err: unknown): Promise<void> {
    await this.fail({ reason: `unexpected error: ${(err as Error)?.message ?? String(err)}`, process: null, diagnosis: null });
  }

  /** Runs until detached-and-ready, a user stop, or a failure. */
  async run(): Promise<SupervisorResult> {
    // The discovery folders and run.json before any spawn; a full disk: nothing starts.
    const refused = recordBeforeSpawn(this);
    if (refused) return refused;
    if (this.o.handleSignals !== false) {
      // The first signal stops cleanly (SIGTERM, grace, SIGKILL); another one while stopping
      // (a failure's stop, or Ctrl-C again) means "now": SIGKILL without waiting out the grace.
      this.offSignals.push(stopThenEscalate({ stop: (s) => void this.stop(s), escalate: (s) => this.escalate(s), stopping: () => this.finishing }));
      // `dynamo-dev restart` left a request in the run's folder (restart-request.ts).
      const r = () => takeRestartRequests(this);
      process.on(RESTART_SIGNAL, r);
      this.offSignals.push(() => process.off(RESTART_SIGNAL, r));
    }
    // Kept alive: nothing else may be pending while every process waits (e.g. all `waiting`).
    this.deadline = this.d.clock.setTimeout(() => void onDeadline(this), this.o.readyTimeoutMs, true);
    this.refresh = this.d.clock.setInterval(() => this.refreshDescendants(true), this.o.descendantsMs ?? 2000);
    // A hub model's download can block a worker on another process's lock without a word in its log.
    if (!isLocalModelPath(this.o.plan.model) && !isEmbeddedModel(this.o.plan.model)) {
      this.lockProbe = this.d.clock.setInterval(() => void this.locks.probe(), this.o.lockProbeMs ?? 1000);
    }
    this.startEligible();
    const result = await this.done;
    for (const off of this.offSignals) off();
    return result;
  }

  /** A user stop (Ctrl-C, SIGTERM, SIGHUP): stop everything, exit 0. */
  async stop(signal: string): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    // `teardown` from another terminal leaves a note before it signals us: say who stopped the run.
    const req = this.d.stopRequest(this.o.stateDir, this.o.runId);
    this.stopWhy = req ? { reason: 'teardown', by: req } : { reason: 'user', by: null };
    const beforeReady = !this.everReady;
    const { stopped, remaining } = await stopForUser(this);
    this.setRunState('stopped');
    await this.writer.flush();
    this.emitEvent({ event: 'stopped', runId: this.o.runId, reason: 'user', stopped, remaining, beforeReady });
    // Something that survived SIGKILL is a failed stop, as for teardown.
    this.resolveDone({ outcome: 'stopped', code: remaining.length > 0 ? 1 : 0, signal, beforeReady });
  }

  /**
   * SIGKILL now rather than at the grace deadline (a second Ctrl-C). Before the stop has begun
   * (a failure still reading its log), the stop starts with SIGKILL due at once. `by`: the signal
   * that asked (a second Ctrl-C is SIGINT; teardown from another terminal sends SIGTERM), so the
   * report says who, not always "the second Ctrl-C".
   */
  escalate(by?: NodeJS.Signals): void {
    this.escalated = true;
    this.escalatedBy = by;
    // status tells a stop's SIGKILL moment: it is now.
    if (this.record.state === 'stopping') {
      this.record.stopKillAt = new Date().toISOString();
      this.writer.persist();
    }
    this.stopHandle?.escalate(by);
  }

  /** `dynamo-dev restart` of one process (process-restart.ts); `readyTimeoutMs` 0: the run's own deadline. */
  restart(name: string, o: { graceMs: number; readyTimeoutMs: number }, note?: (e: RestartEvent) => void, why?: RestartWhy): Promise<RestartDone> {
    return restartProcess(this, name, o, note, why);
  }

  private startEligible(): void {
    if (this.finishing) return;
    const ready = startable(this.procs.map((p) => ({
      name: p.name, state: p.rec.state, waitFor: p.spec.waitFor, gateOpen: p.readiness.gateOpen,
    })));
    for (const name of ready) {
      const p = this.procs.find((q) => q.name === name)!;
      // A start may deliver log lines at once and start others meanwhile.
      if (p.rec.state === 'waiting' && !this.finishing) p.start();
    }
  }

  private onReady(p: ProcessLifecycle): void {
    // Mocker workers have no ready signal of their own: the frontend counting every planned
    // worker and answering a completion is theirs (FACTS §4).
    if (p.spec.role === 'frontend') for (const q of this.procs) q.readiness.confirm();
    if (p.restart) void restartReady(this, p, p.restart);
    this.startEligible();
    this.checkAllReady();
  }

  private checkAllReady(): void {
    if (this.finishing || this.everReady || !this.procs.every((p) => p.rec.state === 'ready')) return;
    this.everReady = true;
    if (this.deadline) this.d.clock.clear(this.deadline);
    if (this.lockProbe) this.d.clock.clear(this.lockProbe);
    // Stryker disable next-line BooleanLiteral: equivalent as `true`: setRunState('ready') below persists the same record in the same write
    this.refreshDescendants(false);
    // Engine processes appear while starting; once ready a rare re-scan is enough (each reads /proc).
    if (this.refresh && (!this.o.detach || this.o.watch)) {
      this.d.clock.clear(this.refresh);
      this.refresh = this.d.clock.setInterval(() => this.refreshDescendants(true), Math.max(this.o.descendantsMs ?? 2000, 30_000));
    }
    this.setRunState('ready');
    const said = readyEvents(this, this.d.clock.now() - this.t0);
    const announce = () => {
      if (this.finishing) return; // stopped meanwhile: it was never ready for anyone
      for (const e of said) this.emitEvent(e);
      if (this.o.detach && this.o.watch) this.watch();
      else if (this.o.detach) void this.detach();
    };
    // Detached, nobody stays to say it: run.json says ready before `up` does.
    if (this.o.detach && this.o.watch) void this.writer.flush().then(announce);
    else announce();
  }

  /**
   * Ready, detached, watching: nothing to poll any more (readiness checks aborted, log followers
   * stopped; a death's diagnosis reads the log file itself). What is left waits on events: each
   * child's exit, the signals, and the rare descendant re-scan the foreground keeps too.
   */
  private watch(): void {
    this.watching = true;
    // Stryker disable next-line StringLiteral: equivalent: the abort reason is only caught by the readiness polls, never shown
    this.abort.abort(new Error('watching'));
    if (this.deadline) this.d.clock.clear(this.deadline);
    for (const p of this.procs) p.follower?.stop();
  }

  private async detach(): Promise<void> {
    this.finishing = true;
    // Stryker disable next-line StringLiteral: equivalent, as in watch()
    this.abort.abort(new Error('detached'));
    this.clearTimers();
    for (const p of this.procs) {
      p.follower?.stop();
      p.spawned?.unref();
    }
    await this.writer.flush();
    this.resolveDone({ outcome: 'detached', code: 0 });
  }

  async fail(f: Failure): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    this.stopWhy = { reason: 'failure', by: null };
    this.emitEvent(await blame(this, f));
    const { stopped, remaining } = await stopAll(this);
    this.setRunState('failed');
    await this.writer.flush();
    this.emitEvent({ event: 'stopped', runId: this.o.runId, reason: 'failure', stopped, remaining });
    this.resolveDone({ outcome: 'failed', code: 1, reason: f.reason });
  }

  clearTimers(): void {
    if (this.deadline) this.d.clock.clear(this.deadline);
    if (this.refresh) this.d.clock.clear(this.refresh);
    if (this.lockProbe) this.d.clock.clear(this.lockProbe);
  }

  setRunState(state: RunState): void {
    this.record.state = state;
    this.writer.persist();
  }

  /** Engine processes (VLLM::*) under each running child, kept so teardown can verify them. */
  refreshDescendants(persist: boolean): void {
    let changed = false;
    for (const p of this.procs) changed = p.refreshDescendants() || changed;
    if (changed && persist) this.writer.persist();
  }
}
