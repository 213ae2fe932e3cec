import { isLocalModelPath } from '../host/hf-paths.js';
import { isEmbeddedModel } from '../plan/embedded-model.js';
import { EventEmitter } from 'node:events';
import { DiskFullError } from '../errors.js';
import { planContext } from '../diagnose/choose-fix.js';
import type { Plan, PlannedProcess } from '../plan/types.js';
import { kvDiagnosticsGap, kvDiagnosticsHint } from '../plan/kv-diagnostics.js';
import type { Recipe } from '../recipe/schema.js';
import type { EndDiagnosis, ProcessRecord, ProcessState, RunRecord, RunState } from './types.js';
import { newProcessRecord, newRunRecord } from './run-record.js';
import { recordDescendants } from './descendant-watch.js';
import type { Follower } from './follow.js';
import { kvLineHiddenBy, stripAnsi } from './readiness.js';
import type { ExitInfo, Spawned } from './spawn.js';
import type { Diagnosis } from './diagnosis.js';
import { curlLine, type ReadyWorker, type UpEvent } from './events.js';
import { ALREADY_GONE, processTargets, type StopHandle, type StopResult, type StopSnapshot, type Survivor } from './stop.js';
import type { TimerHandle } from './clock.js';
import { RunWriter } from './run-writer.js';
import { markedSince, RUN_MARKER } from './run-scan.js';
import { orphanName } from './orphans.js';
import { runDir } from './paths.js';
import { survivorRecords, withSurvivors } from './survivors.js';
import { realSupervisorDeps, type SupervisorDeps } from './supervisor-deps.js';
import { startable } from './policy/start-order.js';
import { ProcessReadiness, readinessPlan, type LockWait } from './policy/readiness.js';
import { deadlineFailure, exitFailure, lockWaitFailure, type FailureReport, type FailureView } from './policy/failure.js';
import { pollHttp } from './readiness.js';
import { stopThenEscalate } from './signals.js';
import { RESTART_CAPABILITY, RESTART_SIGNAL, type RestartEvent } from './restart-request.js';
import { decideRestart, endedHow, policyText, type RestartPolicy } from './policy/restart-policy.js';
import type { RestartEntry } from './types.js';

// The lifecycle of one `up`, as a coordinator of small policies (policy/): start processes in plan
// order (start-order), follow their logs and judge readiness (readiness), on a death or the
// deadline name the process and stop everything (failure), stop with SIGTERM -> grace -> SIGKILL
// (stop.ts with policy/escalation). run.json is rewritten after every state change so status and
// teardown find everything even if we are killed with SIGKILL. The machine comes in as
// SupervisorDeps (supervisor-deps.ts).
//
// Emits 'event' (UpEvent), 'warning' (string) and 'stop-progress' (StopSnapshot, while stopping).

export interface SupervisorOptions {
  plan: Plan;
  /** Recorded in run.json so doctor judges the live run by the recipe it really runs. */
  recipe?: Recipe;
  runId: string;
  stateDir: string;
  /** The user's environment; each process gets it plus the plan's env. */
  env: NodeJS.ProcessEnv;
  readyTimeoutMs: number;
  graceMs: number;
  detach: boolean;
  /** Install SIGINT/SIGTERM/SIGHUP handlers (off in tests that drive stop() themselves). */
  handleSignals?: boolean;
  /** HTTP readiness poll interval (default 50 ms). */
  pollMs?: number;
  /** How often engine descendants are re-scanned while starting (default 2000 ms; every 30 s once ready). */
  descendantsMs?: number;
  /** The run marker's value every child inherits (RUN_MARKER; default the run's directory). */
  runMarker?: string;
  /**
   * Start ticks of the `up` that planned the run: its probes of the interpreter carried the marker
   * from then, before this supervisor started (recorded as supervisor.markedSince).
   */
  markedSinceTicks?: number | null;
  /** The log followers' fallback poll (default 1000 ms; fs.watch delivers lines at once). */
  followPollMs?: number;
  /** How often the model's download locks are looked at while a worker comes up silent (default 1000 ms). */
  lockProbeMs?: number;
  /** How long a worker must be silent before a held lock counts as its wait (default 2000 ms). */
  lockSilentMs?: number;
  /**
   * With `detach`: keep supervising once ready instead of returning (the background supervisor of
   * `up --detach`, src/run/detached-main.ts). A process that ends is recorded with its exit code,
   * signal, time and diagnosis, the run becomes `degraded`, the others keep running; it returns
   * when stopped (teardown signals it) or when every process has ended.
   */
  watch?: boolean;
  /** `up --name`: recorded so commands find the run by it. */
  name?: string;
  /** `up --restart on-failure[:N]`: workers that die after the run was ready are started again. */
  restart?: RestartPolicy | null;
}

/** What `up` decides of a supervision; foreground or background (`--detach`) is the supervisor's own business. */
export type SupervisionOptions = Omit<SupervisorOptions, 'detach' | 'watch' | 'handleSignals'>;

export type SupervisorResult =
  | { outcome: 'detached'; code: 0 }
  /** `beforeReady`: the stop interrupted the start (up exits 130 then). */
  | { outcome: 'stopped'; code: 0 | 1; signal: string; beforeReady: boolean }
  | { outcome: 'failed'; code: 1; reason: string };

const LAST_LINES = 20;
/** The note of a process that teardown's own SIGTERM ended before the supervisor's stop reached it. */
export const TEARDOWN_ENDED = "ended by dynamo-dev teardown's SIGTERM";

interface Proc {
  spec: PlannedProcess;
  rec: ProcessRecord;
  readiness: ProcessReadiness;
  spawned: Spawned | null;
  follower: Follower | null;
  lines: string[];
  exit: ExitInfo | null;
  startedMs: number;
  /** When its log last said something (or it started): a silent worker may be waiting on a lock. */
  lastLineMs: number;
  /** A `dynamo-dev restart` of this process in progress. */
  restart: RestartJob | null;
}

/** The end of one restart, as the command that asked is told. */
export type RestartDone = Extract<RestartEvent, { event: 'done' }>;

interface RestartJob {
  /** stopping: its exit is the restart's own; starting: an exit means it did not come back; ending: given up, being stopped. */
  phase: 'stopping' | 'starting' | 'ending';
  /** The readiness polls of the new start (aborted once it ends either way). */
  abort: AbortController;
  deadline: TimerHandle | null;
  t0: number;
  /** What run.json keeps of this restart (its outcome set at the end). */
  entry: RestartEntry;
  note: (e: RestartEvent) => void;
  settle: (e: RestartDone) => void;
}

interface Failure extends FailureReport {
  /** undefined: diagnose the blamed process's log; null: nothing to diagnose. */
  diagnosis?: Diagnosis | null;
}

export class Supervisor extends EventEmitter {
  readonly record: RunRecord;
  private readonly d: SupervisorDeps;
  private readonly procs: Proc[];
  private readonly abort = new AbortController();
  private deadline: TimerHandle | null = null;
  private refresh: TimerHandle | null = null;
  private lockProbe: TimerHandle | null = null;
  private probingLocks = false;
  private finishing = false;
  private everReady = false;
  /** Ready and watching (options.watch): deaths are recorded, not fatal. */
  private watching = false;
  private readonly t0: number;
  private resolveDone!: (r: SupervisorResult) => void;
  private readonly done = new Promise<SupervisorResult>((r) => (this.resolveDone = r));
  private readonly writer: RunWriter;
  private stopHandle: StopHandle | null = null;
  private escalated = false;
  private escalatedBy: NodeJS.Signals | undefined;
  private stopWhy: { reason: 'user' | 'failure' | 'teardown'; by: string | null } = { reason: 'failure', by: null };
  private hinted = new Set<string>();
  /** Per process: the lock-wait hint shown (who holds the lock), repeated by a deadline failure. */
  private lockHints = new Map<string, string>();
  private readonly offSignals: (() => void)[] = [];
  private readonly marker: string;

  constructor(private readonly o: SupervisorOptions, deps: Partial<SupervisorDeps> = {}) {
    super();
    this.d = { ...realSupervisorDeps(), ...deps };
    this.t0 = this.d.clock.now();
    const pollMs = o.pollMs ?? 50;
    this.procs = o.plan.processes.map((spec) => {
      const p = {
        spec, rec: newProcessRecord(spec, o.stateDir, o.runId), spawned: null, follower: null, lines: [], exit: null, startedMs: 0, lastLineMs: 0, restart: null,
      } as Omit<Proc, 'readiness'> as Proc;
      p.readiness = new ProcessReadiness(
        readinessPlan(spec, o.plan, pollMs), this.readinessHost(p), { get: this.d.get, post: this.d.post, clock: this.d.clock }, this.abort.signal,
      );
      return p;
    });
    this.record = newRunRecord({
      runId: o.runId, name: o.name, plan: o.plan, recipe: o.recipe, processes: this.procs.map((p) => p.rec), now: new Date(),
      supervisor: { pid: this.d.self.pid, startTicks: this.d.self.startTicks, detached: o.detach, requests: o.handleSignals !== false ? [RESTART_CAPABILITY] : [],
        ...(typeof o.markedSinceTicks === 'number' ? { markedSince: o.markedSinceTicks } : {}),
        ...(this.d.self.pidNamespace ? { pidNamespace: this.d.self.pidNamespace } : {}) },
      bootId: this.d.self.bootId,
    });
    if (o.restart) this.record.restartPolicy = o.restart;
    this.writer = new RunWriter(this.record, (rec) => this.d.writeRun(o.stateDir, rec), (w) => this.emit('warning', w));
    this.marker = o.runMarker ?? runDir(o.stateDir, o.runId);
  }

  /** A listener that throws (a renderer on a dead terminal) must never stop supervision. */
  private emitEvent(e: UpEvent): void {
    try {
      this.emit('event', e);
    } catch (err) {
      try {
        this.emit('warning', `cannot show the ${e.event} event: ${(err as Error)?.message ?? String(err)}`);
      } catch {
        // nowhere left to say it
      }
    }
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
    // The per-run discovery directory (DYN_FILE_KV) exists before anyone registers in it.
    const dirs = new Set(this.o.plan.processes.map((p) => p.env.DYN_FILE_KV).filter((d): d is string => Boolean(d)));
    for (const d of dirs) this.d.mkdirs(d);
    // Before any spawn, and a failure here is up's failure: nothing may run unrecorded.
    this.record.updatedAt = new Date().toISOString();
    try {
      this.d.writeRun(this.o.stateDir, this.record);
    } catch (err) {
      if (!(err instanceof DiskFullError)) throw err;
      // A full disk before anything started: up fails with the file and what to do, nothing runs.
      this.finishing = true;
      this.emitEvent({ event: 'failed', reason: `${err.message}; nothing was started`, process: null, diagnosis: null, hint: null, lastLines: [], log: null });
      return { outcome: 'failed', code: 1, reason: err.message };
    }
    if (this.o.handleSignals !== false) {
      // The first signal stops cleanly (SIGTERM, grace, SIGKILL); another one while stopping
      // (a failure's stop, or Ctrl-C again) means "now": SIGKILL without waiting out the grace.
      this.offSignals.push(stopThenEscalate({ stop: (s) => void this.stop(s), escalate: (s) => this.escalate(s), stopping: () => this.finishing }));
      // `dynamo-dev restart` left a request in the run's folder (restart-request.ts).
      const r = () => this.takeRestarts();
      process.on(RESTART_SIGNAL, r);
      this.offSignals.push(() => process.off(RESTART_SIGNAL, r));
    }
    // Kept alive: nothing else may be pending while every process waits (e.g. all `waiting`).
    this.deadline = this.d.clock.setTimeout(() => void this.onDeadline(), this.o.readyTimeoutMs, true);
    this.refresh = this.d.clock.setInterval(() => this.refreshDescendants(true), this.o.descendantsMs ?? 2000);
    // A hub model's download can block a worker on another process's lock without a word in its log.
    if (!isLocalModelPath(this.o.plan.model) && !isEmbeddedModel(this.o.plan.model)) {
      this.lockProbe = this.d.clock.setInterval(() => void this.probeLockWaits(), this.o.lockProbeMs ?? 1000);
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
    // teardown signals the run's processes too, right after us: one can die of its SIGTERM before
    // or while our stop looks at it, and our stop then finds it gone (no signal, 'already gone'). It was
    // stopped all the same, by teardown: counted so, not left out of "stopped N processes". Those are
    // the ones running now, and those whose exit onExit already took for teardown's (state stopped).
    const byTeardown = new Set(this.stopWhy.reason !== 'teardown' ? [] : this.procs
      .filter((q) => q.rec.pid !== null && (q.exit === null || q.rec.state === 'stopped'))
      .map((q) => q.spec.name));
    const all = await this.stopAll();
    const stopped = all.stopped.map((r) => (r.signal === null && r.note === ALREADY_GONE && byTeardown.has(r.name) ? { ...r, signal: 'SIGTERM' as const, note: TEARDOWN_ENDED } : r));
    const remaining = all.remaining;
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

  // ---- starting ---------------------------------------------------------------------------

  private startEligible(): void {
    if (this.finishing) return;
    const ready = startable(this.procs.map((p) => ({
      name: p.spec.name, state: p.rec.state, waitFor: p.spec.waitFor, gateOpen: p.readiness.gateOpen,
    })));
    for (const name of ready) {
      const p = this.procs.find((q) => q.spec.name === name)!;
      // A start may deliver log lines at once and start others meanwhile.
      if (p.rec.state === 'waiting' && !this.finishing) this.start(p);
    }
  }

  /** `offset`: where in its log this start's lines begin (a restart appends to the old log). */
  private start(p: Proc, offset = 0): void {
    // The marker: everything this process ever forks inherits it, so status and teardown find
    // even what escapes its group or what a SIGKILLed `up` never recorded.
    const env = { ...this.o.env, ...p.spec.env, [RUN_MARKER]: this.marker };
    const s = this.d.spawn(p.spec.argv, env, p.rec.log);
    p.spawned = s;
    p.startedMs = this.d.clock.now();
    p.lastLineMs = p.startedMs;
    Object.assign(p.rec, { pid: s.pid, pgid: s.pgid, startTicks: s.startTicks, startedAt: s.startedAt });
    p.rec.state = 'starting';
    // On disk before anyone hears of it: `up` SIGKILLed right after `starting` leaves the pid recorded.
    this.writer.writeNow();
    this.emitEvent({ event: 'starting', process: p.spec.name, pid: s.pid, log: p.rec.log, waitedFor: p.spec.waitFor });
    this.setState(p, 'starting');
    // fs.watch (inotify) wakes the follower on every write; the poll only catches what it misses,
    // so an idle run reads nothing 10 times a second (issue 9: <= 0.5% CPU idle after ready).
    p.follower = this.d.follow(p.rec.log, (line) => this.onLine(p, line), { pollMs: this.o.followPollMs ?? 1000, ...(offset > 0 ? { offset } : {}) });
    s.exited.then((info) => void this.onExit(p, info));
    p.readiness.started();
  }

  // ---- following ----------------------------------------------------------------------------

  private onLine(p: Proc, raw: string): void {
    const line = stripAnsi(raw);
    p.lastLineMs = this.d.clock.now();
    p.lines.push(line);
    if (p.lines.length > LAST_LINES) p.lines.shift();
    this.emitEvent({ event: 'line', process: p.spec.name, text: line });
    // The router's own diagnostic: cache-aware routing is off while the run comes up "ready".
    if (!this.hinted.has(`${p.spec.name}/kv-events`) && /kv_event_publisher_disabled/.test(line)) {
      this.hinted.add(`${p.spec.name}/kv-events`);
      this.emitEvent({
        event: 'hint', process: p.spec.name, code: 'kv_event_publisher_disabled',
        text: 'a worker publishes no KV events: the KV router ignores the cache (see `dynamo-dev doctor --only kv.events`)',
      });
    }
    p.readiness.onLine(line);
  }

  private readinessHost(p: Proc) {
    return {
      state: () => p.rec.state,
      setState: (s: ProcessState) => this.setState(p, s),
      kvLine: (tokens: number) => {
        p.rec.kvTokens = tokens;
        p.restart?.note({ event: 'log-ready', process: p.spec.name, kvTokens: tokens, ms: this.d.clock.now() - p.startedMs });
        this.emitEvent({ event: 'log-ready', process: p.spec.name, kvTokens: tokens, ms: this.d.clock.now() - p.startedMs });
      },
      // Stryker disable next-line ArrowFunction: equivalent: readiness calls changed() only for a KV line after healthy, which cannot happen (policy/readiness.ts, onLine)
      changed: () => this.writer.persist(),
      gateOpened: () => this.startEligible(),
      lockWait: (w: LockWait) => {
        // A restart is judged by its own deadline; it never stops the run.
        const f = p.restart ? null : lockWaitFailure(this.failureView(p), w.lockPath, this.procs.map((q) => this.failureView(q)), this.o.plan.model);
        if (f) void this.fail(f);
        else void this.lockHint(p, w);
      },
      ready: () => {
        // Mocker workers have no ready signal of their own: the frontend counting every planned
        // worker and answering a completion is theirs (FACTS §4).
        if (p.spec.role === 'frontend') for (const q of this.procs) q.readiness.confirm();
        if (p.restart) void this.restartReady(p, p.restart);
        this.startEligible();
        this.checkAllReady();
      },
      running: () => !this.finishing,
      exited: () => p.exit !== null,
    };
  }

  /**
   * The real worker waits on a download lock silently: huggingface_hub logs its "Still waiting to
   * acquire lock on ..." at INFO under a WARNING-level logger (1.33.0 utils/_fixes.py,
   * utils/logging.py), vLLM says nothing, and Dynamo's prefetch (hf-hub 0.4.3) retries for ~5 s
   * before it fails. So the facts it leaves are read instead: a worker coming up that has been silent
   * for lockSilentMs while a lock of the model is held by a process outside its own tree is waiting.
   */
  private async probeLockWaits(): Promise<void> {
    if (this.probingLocks || this.finishing) return;
    const now = this.d.clock.now();
    const silent = this.procs.filter((p) => p.spec.role !== 'frontend' && p.rec.pid !== null && p.exit === null && !p.restart && !p.readiness.lockWait &&
      (p.rec.state === 'starting' || p.rec.state === 'loading') && now - p.lastLineMs >= (this.o.lockSilentMs ?? 2000));
    if (silent.length === 0) return;
    this.probingLocks = true;
    try {
      for (const p of silent) {
        const held = await this.d.heldModelLocks(this.o.plan.model, { ...this.o.env, ...p.spec.env }).catch(() => []);
        if (this.finishing) return;
        if (held.length === 0 || p.exit !== null || p.readiness.kvSeen || p.readiness.lockWait) continue;
        const own = new Set<number>([p.rec.pid!]);
        try {
          for (const d of this.d.descendants(p.rec.pid!)) own.add(d.pid);
        } catch {
          // the leader alone
        }
        // Its own download holds the lock while it works: that is progress, not a wait.
        const lock = held.find((l) => l.holders.some((h) => !own.has(h.pid)));
        if (!lock) continue;
        p.readiness.lockWait = { lockPath: lock.path, elapsedS: null };
        if (p.rec.state === 'starting') this.setState(p, 'loading');
        void this.lockHint(p, p.readiness.lockWait);
      }
    } finally {
      this.probingLocks = false;
    }
  }

  /** Once per process: the row says whose lock it waits for (as `doctor --only hf.locks` would). */
  private async lockHint(p: Proc, w: LockWait): Promise<void> {
    if (this.hinted.has(p.spec.name)) return;
    this.hinted.add(p.spec.name);
    const holders = await this.d.lockHolders(w.lockPath).catch(() => []);
    if (this.finishing) return;
    const h = holders.find((x) => x.pid > 0);
    const ours = h ? this.runPidsNow() : new Set<number>();
    const cmd = h?.cmd ? h.cmd.replace(/\s+/g, ' ').trim() : '';
    // The holder's command line, cut after a whole word: enough to recognise it.
    const short = cmd.length > 60 ? `${cmd.slice(0, 60).replace(/\s+\S*$/, '')}…` : cmd;
    const who = !h ? 'a process this machine cannot see (another container?) or none: a stale lock'
      : `pid ${h.pid}${ours.has(h.pid) ? ' (this run)' : ''}${short ? ` (${short})` : ''}`;
    const text = `waiting for the Hugging Face download lock held by ${who}; see \`dynamo-dev doctor --only hf.locks\``;
    this.lockHints.set(p.spec.name, text);
    // Kept in run.json: bench's hf.no-lock-wait gate judges a wait the log never mentions.
    p.rec.lockWait = { lockPath: w.lockPath, holderPid: h?.pid ?? null, holderCmd: h?.cmd ?? null, at: new Date().toISOString() };
    this.writer.persist();
    this.emitEvent({ event: 'hint', process: p.spec.name, code: 'hf.lock-wait', text });
  }

  /**
   * The live pids of the run's running processes: each one we spawned and its descendants now.
   * A process started through a wrapper that stays (uv run, `sh -c '. venv/bin/activate && python
   * ...'`) is the wrapper's pid in the record, while the program doing the work (holding a download
   * lock) is its child; the recorded descendants lag (refreshed every few seconds).
   */
  private runPidsNow(): Set<number> {
    const out = new Set<number>();
    for (const q of this.procs) {
      if (q.rec.pid === null || q.exit !== null) continue;
      out.add(q.rec.pid);
      try {
        for (const d of this.d.descendants(q.rec.pid)) out.add(d.pid);
      } catch {
        // a look that failed: the leader alone
      }
    }
    return out;
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
    const workers: ReadyWorker[] = this.procs.filter((p) => p.spec.role !== 'frontend').map((p) => ({
      name: p.spec.name, role: p.spec.role, kvTokens: p.rec.kvTokens, gpuMemoryUtilization: p.spec.gpuMemoryUtilization,
      log: p.rec.log, health: p.spec.ready.http ?? null,
    }));
    const ms = this.d.clock.now() - this.t0;
    const announce = () => {
      if (this.finishing) return; // stopped meanwhile: it was never ready for anyone
      // The live warning above (kv_event_publisher_disabled) cannot come from a release that does
      // not log it: say so once, rather than let its absence read as "events arrive".
      const gap = kvDiagnosticsGap(this.o.plan);
      const fe = this.procs.find((p) => p.spec.role === 'frontend');
      if (gap && fe && !this.hinted.has('frontend/kv-diagnostics')) {
        this.hinted.add('frontend/kv-diagnostics');
        this.emitEvent({ event: 'hint', process: fe.spec.name, code: 'kv_diagnostics_unlogged', text: kvDiagnosticsHint(gap) });
      }
      this.emitEvent({
        event: 'ready', runId: this.o.runId, url: this.o.plan.frontendUrl, model: this.o.plan.model,
        curl: curlLine(this.o.plan.frontendUrl, this.o.plan.model), workers,
        logs: Object.fromEntries(this.procs.map((p) => [p.spec.name, p.rec.log])), ms, detached: this.o.detach,
      });
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

  // ---- failures -----------------------------------------------------------------------------

  private failureView(p: Proc): FailureView {
    const frontend = this.procs.find((q) => q.spec.role === 'frontend');
    return {
      name: p.spec.name, role: p.spec.role, state: p.rec.state, waitFor: p.spec.waitFor, readyHttp: p.spec.ready.http,
      lockWait: p.readiness.lockWait, loaded: p.readiness.kvSeen || p.readiness.healthy,
      waitingFor: p.readiness.plan.viaFrontend ? frontend?.readiness.waitingFor ?? null : p.readiness.waitingFor,
      viaFrontend: Boolean(p.readiness.plan.viaFrontend),
    };
  }

  private async onExit(p: Proc, info: ExitInfo): Promise<void> {
    p.exit = info;
    p.rec.exitCode = info.code;
    p.rec.signal = info.signal;
    p.rec.endedAt = new Date().toISOString();
    if (p.restart && !this.finishing) return this.onRestartExit(p, p.restart, info);
    if (this.finishing) {
      if (p.rec.state !== 'failed') this.setState(p, 'stopped');
      return;
    }
    // `teardown` from another terminal may reach a process before its SIGTERM reaches us: a stop.
    if (this.d.stopRequest(this.o.stateDir, this.o.runId)) {
      this.setState(p, 'stopped');
      await this.stop('SIGTERM');
      return;
    }
    // up --restart: a worker that dies once the run was ready is started again, within the policy's limit.
    const policy = decideRestart(this.o.restart ?? null, {
      role: p.spec.role, afterReady: this.everReady, code: info.code, signal: info.signal, error: info.error,
      restartsByPolicy: (p.rec.restartHistory ?? []).filter((r) => r.by === 'on-failure').length,
    });
    if (policy.restart) return this.restartOnFailure(p, info);
    if (policy.why) p.rec.restartsEnded = { at: new Date().toISOString(), reason: policy.why };
    if (this.watching) return this.recordDeath(p, info);
    p.follower?.drain();
    this.setState(p, 'failed');
    const { top } = await this.d.diagnose(p.rec.log, planContext(this.o.plan));
    p.rec.diagnosis = endDiagnosis(top);
    if (this.finishing) return;
    this.emitEvent({
      event: 'exited', process: p.spec.name, code: info.code, signal: info.signal, error: info.error, diagnosis: top, afterReady: this.everReady,
      lastLines: [...p.lines], log: p.rec.log,
    });
    const f = exitFailure({ name: p.spec.name, argv0: p.spec.argv[0] }, info, this.everReady);
    await this.fail({ ...f, reason: policy.why ? `${f.reason}; not restarted: ${policy.why}` : f.reason, diagnosis: top });
  }

  /**
   * `up --restart`: a worker of a ready run died; recorded as a death (the run degraded, its
   * diagnosis), then restarted as `dynamo-dev restart` does (what is left of its group stopped, a
   * marker in its log, started from the plan, ready again once the frontend counts it). One that
   * does not come back is not tried again: the run stays degraded and says why.
   */
  private async restartOnFailure(p: Proc, info: ExitInfo): Promise<void> {
    p.follower?.drain();
    const policy = policyText(this.o.restart!);
    const top = await this.degradedBy(p, info, 'failed', this.watching ? [] : [...p.lines], policy);
    if (this.finishing) return;
    const how = endedHow(info);
    const done = await this.restart(p.spec.name, { graceMs: this.o.graceMs, readyTimeoutMs: 0 }, () => {}, { by: 'on-failure', cause: how, diagnosis: top?.code ?? null });
    if (done.ok) {
      this.emitEvent({ event: 'hint', process: p.spec.name, code: 'restart.on-failure', text: `ready again (restart ${p.rec.restarts ?? 1}, --restart ${policy}); run ${done.runState}` });
      return;
    }
    if (this.finishing) return;
    p.rec.restartsEnded = { at: new Date().toISOString(), reason: `its restart did not come back: ${done.reason}` };
    this.writer.persist();
    // In the foreground a death after ready that is not made good ends the run, as without the flag.
    if (!this.watching) {
      await this.fail({ reason: `${p.spec.name} ${how} after the run was ready; its restart did not come back: ${done.reason}`, process: p.spec.name, diagnosis: done.ok ? null : done.diagnosis });
      return;
    }
    this.emitEvent({ event: 'hint', process: p.spec.name, code: 'restart.on-failure', text: `did not come back (${done.reason}); not restarted again; the run is degraded` });
  }

  /**
   * A process of a watched (detached, ready) run ended: recorded with how and when and its log's
   * diagnosis; the run is degraded, the others keep serving (status, doctor and teardown take it
   * from run.json). When nothing of the run is left running, the run has failed: stop what is left
   * of it (an engine that outlived its worker) and return.
   */
  private async recordDeath(p: Proc, info: ExitInfo): Promise<void> {
    await this.degradedBy(p, info, info.code === 0 && info.signal === null ? 'exited' : 'failed', []);
    if (this.finishing || !this.procs.every((q) => q.exit !== null)) return;
    await this.fail({ reason: 'every process of the run has ended', process: null, diagnosis: null });
  }

  /** A death after ready that does not end the run: the process recorded so with its log's diagnosis, the run degraded, told. */
  private async degradedBy(p: Proc, info: ExitInfo, state: ProcessState, lastLines: string[], restart?: string): Promise<Diagnosis | null> {
    this.setState(p, state);
    this.setRunState('degraded');
    const { top } = await this.d.diagnose(p.rec.log, planContext(this.o.plan));
    p.rec.diagnosis = endDiagnosis(top);
    this.writer.persist();
    this.emitEvent({
      event: 'exited', process: p.spec.name, code: info.code, signal: info.signal, error: info.error, diagnosis: top, afterReady: true,
      lastLines, log: p.rec.log, ...(restart ? { restart } : {}),
    });
    return top;
  }

  private async onDeadline(): Promise<void> {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent: while finishing fail() below returns at once, and ready clears this timer
    if (this.finishing || this.everReady) return;
    const f: Failure = deadlineFailure(this.procs.map((p) => this.failureView(p)), this.o.readyTimeoutMs);
    // A KV line that the logging level hides never comes: say so rather than "still loading".
    const stuck = this.procs.find((p) => p.spec.name === f.process);
    const hidden = stuck?.readiness.plan.kvPattern && !stuck.readiness.kvSeen ? kvLineHiddenBy({ ...this.o.env, ...stuck.spec.env }) : null;
    if (hidden && !f.hint) {
      f.hint = `VLLM_LOGGING_LEVEL=${hidden} hides vLLM's INFO line "GPU KV cache size: N tokens" that readiness waits for: unset it or set it to INFO`;
    }
    // The failure report says who holds the lock it stalled behind, as the live hint did.
    const lock = stuck ? this.lockHints.get(stuck.spec.name) : undefined;
    if (lock && !f.hint) f.hint = `${stuck!.spec.name} was ${lock}`;
    await this.fail(f);
  }

  private async fail(f: Failure): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    this.stopWhy = { reason: 'failure', by: null };
    const p = f.process === null ? null : this.procs.find((q) => q.spec.name === f.process) ?? null;
    let diagnosis = f.diagnosis ?? null;
    if (p && f.diagnosis === undefined) {
      p.follower?.drain();
      diagnosis = (await this.d.diagnose(p.rec.log, planContext(this.o.plan))).top;
    }
    if (p && !p.rec.diagnosis) p.rec.diagnosis = endDiagnosis(diagnosis);
    if (p && p.rec.state !== 'failed') this.setState(p, 'failed');
    this.emitEvent({
      event: 'failed', reason: f.reason, process: p?.spec.name ?? null, diagnosis, hint: f.hint ?? null,
      lastLines: p ? [...p.lines] : [], log: p?.rec.log ?? null,
    });
    const { stopped, remaining } = await this.stopAll();
    this.setRunState('failed');
    await this.writer.flush();
    this.emitEvent({ event: 'stopped', runId: this.o.runId, reason: 'failure', stopped, remaining });
    this.resolveDone({ outcome: 'failed', code: 1, reason: f.reason });
  }

  // ---- restarting one process (dynamo-dev restart) ----------------------------------------------

  /** The restart signal: every pending request of `dynamo-dev restart`, each answered in its events file. */
  private takeRestarts(): void {
    for (const r of this.d.restartRequests(this.o.stateDir, this.o.runId)) {
      const note = (e: RestartEvent) => this.d.restartEvent(this.o.stateDir, this.o.runId, r.id, e);
      void this.restart(r.process, { graceMs: r.graceMs, readyTimeoutMs: r.readyTimeoutMs }, note);
    }
  }

  /**
   * Stops one process as teardown would (its group, SIGTERM, grace, SIGKILL, the pid-reuse guard)
   * and starts it again from the plan, its log appended after a marker line; readiness is judged
   * again (its KV line and health, then the frontend counting every worker; for the frontend its
   * whole readiness, which counts every worker). The run is `degraded` meanwhile and `ready` again
   * once every process is. `readyTimeoutMs` 0: the run's own deadline.
   */
  async restart(
    name: string, o: { graceMs: number; readyTimeoutMs: number }, note: (e: RestartEvent) => void = () => {},
    why: { by: RestartEntry['by']; cause: string | null; diagnosis: string | null } = { by: 'command', cause: null, diagnosis: null },
  ): Promise<RestartDone> {
    const p = this.procs.find((q) => q.spec.name === name);
    const refuse = (reason: string): RestartDone => {
      const e: RestartDone = { event: 'done', ok: false, process: name, reason, diagnosis: null, lastLines: [], log: null, runState: this.record.state };
      note(e);
      return e;
    };
    if (!p) return refuse(`no process "${name}" in this run`);
    if (this.finishing) return refuse('the run is stopping');
    if (!this.everReady) return refuse('the run is still starting; a process can be restarted once the run has been ready');
    if (p.restart) return refuse(`${name} is already being restarted`);
    let settle!: (e: RestartDone) => void;
    const done = new Promise<RestartDone>((r) => (settle = r));
    // A command's restart of a process that had ended says how it ended, as the policy's does.
    const ended = p.exit !== null && why.cause === null ? { cause: endedHow(p.exit), diagnosis: p.rec.diagnosis?.code ?? null } : {};
    const entry: RestartEntry = {
      at: '', by: why.by, cause: why.cause, exitCode: p.exit?.code ?? null, signal: p.exit?.signal ?? null, diagnosis: why.diagnosis, outcome: null, ...ended,
    };
    const job: RestartJob = { phase: 'stopping', abort: new AbortController(), deadline: null, t0: this.d.clock.now(), entry, note, settle: (e) => {
      note(e);
      settle(e);
    } };
    p.restart = job;
    note({ event: 'taken', process: name, pid: p.exit === null ? p.rec.pid : null });
    this.setRunState('degraded');
    // Also when it has ended: what is left of its group (an engine core holding GPU memory) goes too.
    if (p.rec.pid !== null) {
      this.refreshOne(p);
      const res = await this.d.stop(processTargets([p.rec]), { graceMs: o.graceMs }).done;
      for (const r of res.stopped) note({ event: 'stopped', process: name, pid: r.pid, signal: r.signal, ms: r.ms, ...(r.note ? { note: r.note } : {}) });
      if (res.remaining.length > 0) {
        this.keepSurvivors(res.remaining);
        this.endRestart(p, job, `${name} outlived SIGKILL (pid ${res.remaining.map((r) => r.pid).join(', ')}); it is not started again beside it`, null);
        return done;
      }
      // Its exit code (onExit records it): the group is empty, so it comes at once.
      if (p.exit === null) {
        let t: TimerHandle | null = null;
        await Promise.race([p.spawned?.exited, new Promise((r) => (t = this.d.clock.setTimeout(() => r(null), 300)))]);
        if (t) this.d.clock.clear(t);
      }
    }
    if (p.restart !== job) return done; // the run was stopped meanwhile
    const at = new Date();
    const n = (p.rec.restarts ?? 0) + 1;
    const marker = why.by === 'on-failure'
      ? `--- dynamo-dev restart ${at.toISOString()}: ${name} ${why.cause ?? 'ended'}; started again by --restart ${policyText(this.o.restart ?? { mode: 'on-failure', max: null })} (restart ${n}) ---`
      : `--- dynamo-dev restart ${at.toISOString()}: ${name} stopped and started again (restart ${n}) ---`;
    let offset = 0;
    try {
      offset = this.d.appendLog(p.rec.log, marker);
    } catch (err) {
      this.emit('warning', `cannot mark the restart in ${p.rec.log}: ${(err as Error).message}`);
    }
    Object.assign(p.rec, {
      exitCode: null, signal: null, endedAt: null, noticedGoneAt: null, diagnosis: null, kvTokens: null, descendants: [], restarts: n, restartedAt: at.toISOString(), stop: null,
    });
    entry.at = at.toISOString();
    p.rec.restartHistory = [...(p.rec.restartHistory ?? []), entry];
    p.exit = null;
    p.lines = [];
    p.follower?.stop();
    job.phase = 'starting';
    p.readiness = new ProcessReadiness(
      readinessPlan(p.spec, this.o.plan, this.o.pollMs ?? 50), this.readinessHost(p), { get: this.d.get, post: this.d.post, clock: this.d.clock }, job.abort.signal,
    );
    const timeoutMs = o.readyTimeoutMs > 0 ? o.readyTimeoutMs : this.o.readyTimeoutMs;
    job.deadline = this.d.clock.setTimeout(() => void this.restartDeadline(p, job, timeoutMs), timeoutMs, true);
    this.start(p, offset);
    note({ event: 'starting', process: name, pid: p.rec.pid, log: p.rec.log, marker });
    // A worker with no ready signal of its own (the mocker) is ready when the frontend counts it.
    if (p.readiness.plan.viaFrontend) {
      void this.frontendCounts(job.abort.signal).then((ok) => {
        if (!ok || p.restart !== job) return;
        p.readiness.confirm();
        void this.restartReady(p, job);
      });
    }
    return done;
  }

  /** The restarted process is ready by its own signs: a worker waits for the frontend to count it. */
  private async restartReady(p: Proc, job: RestartJob): Promise<void> {
    if (job.phase !== 'starting') return;
    if (p.spec.role !== 'frontend' && !p.readiness.plan.viaFrontend) {
      if (!(await this.frontendCounts(job.abort.signal)) || p.restart !== job) return;
    }
    job.note({ event: 'counted', process: p.spec.name, by: 'frontend' });
    if (job.deadline) this.d.clock.clear(job.deadline);
    job.abort.abort(new Error('ready'));
    p.restart = null;
    // Back and ready: a later death is the policy's to judge again.
    p.rec.restartsEnded = null;
    job.entry.outcome = 'ready';
    // Watching needs no follower once ready (as watch() stops them all).
    if (this.watching) p.follower?.stop();
    if (this.procs.every((q) => q.rec.state === 'ready')) this.setRunState('ready');
    await this.writer.flush();
    job.settle({ event: 'done', ok: true, process: p.spec.name, ms: this.d.clock.now() - job.t0, runState: this.record.state });
  }

  /** The frontend's readiness steps again (live, model listed, every planned worker counted, a completion). */
  private async frontendCounts(signal: AbortSignal): Promise<boolean> {
    const fe = this.procs.find((q) => q.spec.role === 'frontend');
    if (!fe) return true;
    try {
      for (const s of readinessPlan(fe.spec, this.o.plan, this.o.pollMs ?? 50).steps) {
        await pollHttp(s.url, s.judge, { intervalMs: s.intervalMs, requestTimeoutMs: s.timeoutMs ?? 1000, signal, body: s.body }, { get: this.d.get, post: this.d.post, clock: this.d.clock });
      }
      return true;
    } catch {
      return false; // aborted: the restart ended otherwise
    }
  }

  private async onRestartExit(p: Proc, job: RestartJob, info: ExitInfo): Promise<void> {
    if (job.phase === 'stopping') return this.setState(p, 'stopped');
    p.follower?.drain();
    if (job.phase === 'ending') return; // given up on at the deadline: endRestart said why
    job.phase = 'ending';
    this.setState(p, 'failed');
    const { top } = await this.d.diagnose(p.rec.log, planContext(this.o.plan));
    p.rec.diagnosis = endDiagnosis(top);
    const how = info.error ? `could not be started: ${info.error}` : info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    this.endRestart(p, job, `${p.spec.name} ${how} while starting again`, top);
    if (this.watching && this.procs.every((q) => q.exit !== null)) await this.fail({ reason: 'every process of the run has ended', process: null, diagnosis: null });
  }

  /** Not ready in time: stopped again (as up stops a start that passed its deadline), reported with what it waited for. */
  private async restartDeadline(p: Proc, job: RestartJob, timeoutMs: number): Promise<void> {
    if (p.restart !== job || job.phase !== 'starting') return;
    job.phase = 'ending';
    job.abort.abort(new Error('deadline'));
    const fv = this.failureView(p);
    const waiting = fv.waitingFor ?? (p.readiness.plan.kvPattern && !p.readiness.kvSeen ? 'its KV cache line' : 'readiness');
    if (p.exit === null) await this.d.stop(processTargets([p.rec]), { graceMs: this.o.graceMs }).done;
    p.follower?.drain();
    if (p.restart !== job) return;
    this.setState(p, 'failed');
    const { top } = await this.d.diagnose(p.rec.log, planContext(this.o.plan));
    p.rec.diagnosis = endDiagnosis(top);
    this.endRestart(p, job, `${p.spec.name} was not ready within ${Math.round(timeoutMs / 1000)} s (waiting for ${waiting}); stopped again`, top);
  }

  private endRestart(p: Proc, job: RestartJob, reason: string, diagnosis: Diagnosis | null): void {
    if (job.deadline) this.d.clock.clear(job.deadline);
    job.abort.abort(new Error('ended'));
    p.restart = null;
    Object.assign(job.entry, { outcome: 'failed', reason });
    if (!this.finishing) this.setRunState('degraded');
    this.writer.persist();
    job.settle({ event: 'done', ok: false, process: p.spec.name, reason, diagnosis, lastLines: [...p.lines], log: p.rec.log, runState: this.record.state });
  }

  // ---- stopping -----------------------------------------------------------------------------

  private async stopAll(): Promise<{ stopped: StopResult[]; remaining: Survivor[] }> {
    // Stryker disable next-line StringLiteral: equivalent, as in watch()
    this.abort.abort(new Error('stopping'));
    for (const p of this.procs) {
      if (p.restart) this.endRestart(p, p.restart, 'the run was stopped while it restarted', null);
    }
    this.clearTimers();
    // Stryker disable next-line BooleanLiteral: equivalent as `true`: setRunState('stopping') below persists the same record in the same write
    this.refreshDescendants(false);
    // When what ignores SIGTERM gets SIGKILL: status tells it while the run is stopping.
    const killAt = Date.now() + (this.escalated ? 0 : this.o.graceMs);
    this.record.stopKillAt = new Date(killAt).toISOString();
    this.setRunState('stopping');
    for (const p of this.procs) if (p.rec.pid === null && p.rec.state === 'waiting') this.setState(p, 'stopped');
    const targets = processTargets(this.procs.map((p) => p.rec));
    let res: { stopped: StopResult[]; remaining: Survivor[] } = { stopped: [], remaining: [] };
    if (targets.length > 0) {
      this.emitEvent({
        event: 'stopping', reason: this.stopWhy.reason, by: this.stopWhy.by, killAt,
        targets: targets.map((t) => ({ name: t.name, pid: t.pid })),
      });
      this.stopHandle = this.d.stop(targets, {
        graceMs: this.o.graceMs,
        onState: (snap: StopSnapshot) => {
          this.emit('stop-progress', snap);
          this.emitEvent({ event: 'stop-progress', killInMs: snap.killInMs, targets: snap.targets });
        },
      });
      if (this.escalated) this.stopHandle.escalate(this.escalatedBy);
      res = await this.stopHandle.done;
    }
    // What this stop sent each process, kept in run.json: a teardown that signalled us finds some
    // of them gone when it looks, and credits them to us from here rather than "already gone".
    for (const r of res.stopped) {
      const p = this.procs.find((q) => q.spec.name === r.name && q.rec.pid === r.pid);
      if (p && r.signal !== null) p.rec.stop = { signal: r.signal, ms: r.ms };
    }
    res = await this.stopUnrecorded(res);
    // Collect exit codes of the children we signalled (they are gone: the group is empty).
    let grace: TimerHandle | null = null;
    await Promise.race([
      Promise.all(this.procs.map((p) => p.spawned?.exited ?? Promise.resolve(null))),
      new Promise((r) => (grace = this.d.clock.setTimeout(() => r(null), 300))),
    ]);
    if (grace) this.d.clock.clear(grace);
    for (const p of this.procs) {
      p.follower?.stop();
      // What ended on its own before the stop keeps saying how (failed, exited).
      if (p.rec.state !== 'failed' && p.rec.state !== 'stopped' && p.rec.state !== 'exited') this.setState(p, 'stopped');
    }
    this.keepSurvivors(res.remaining);
    return res;
  }

  /**
   * What outlived SIGKILL stays the run's in run.json (pid, start ticks; a process's among its
   * descendants), so once we exit, status still shows the run with them and teardown tries them again.
   */
  private keepSurvivors(remaining: Survivor[]): void {
    const kept = survivorRecords(remaining, new Date());
    if (kept.length === 0) return;
    this.record.survivors = kept;
    for (const p of this.procs) {
      const d = withSurvivors(p.rec, kept);
      if (d) p.rec.descendants = d;
    }
    this.writer.persist();
  }

  /**
   * What the stop of the recorded targets missed but the run marker names (a helper that
   * double-forked out of its group): stopped alone, in up to two more passes, so `stopped` never
   * reports nothing remaining while something of the run lives.
   */
  private async stopUnrecorded(res: { stopped: StopResult[]; remaining: Survivor[] }): Promise<{ stopped: StopResult[]; remaining: Survivor[] }> {
    for (let pass = 0; pass < 2; pass++) {
      const left = (await this.d.marked(this.marker, markedSince(this.record) ?? 0)).filter((m) => !res.remaining.some((r) => r.pid === m.pid));
      if (left.length === 0) break;
      const targets = left.map((m) => ({ name: orphanName(m.cmd), pid: m.pid, pgid: m.pid, startTicks: m.startTicks, single: true }));
      this.stopHandle = this.d.stop(targets, { graceMs: this.o.graceMs });
      if (this.escalated) this.stopHandle.escalate(this.escalatedBy);
      const more = await this.stopHandle.done;
      res = { stopped: [...res.stopped, ...more.stopped], remaining: [...res.remaining, ...more.remaining] };
    }
    return res;
  }

  private clearTimers(): void {
    if (this.deadline) this.d.clock.clear(this.deadline);
    if (this.refresh) this.d.clock.clear(this.refresh);
    if (this.lockProbe) this.d.clock.clear(this.lockProbe);
  }

  // ---- record keeping -------------------------------------------------------------------------

  private setState(p: Proc, state: ProcessState): void {
    p.rec.state = state;
    this.emitEvent({ event: 'state', process: p.spec.name, state, kvTokens: p.rec.kvTokens, pid: p.rec.pid });
    if (state !== 'stopped' && state !== 'failed') this.refreshOne(p);
    this.writer.persist();
  }

  private setRunState(state: RunState): void {
    this.record.state = state;
    this.writer.persist();
  }

  /** Engine processes (VLLM::*) under each running child, kept so teardown can verify them. */
  private refreshDescendants(persist: boolean): void {
    let changed = false;
    for (const p of this.procs) changed = this.refreshOne(p) || changed;
    if (changed && persist) this.writer.persist();
  }

  private refreshOne(p: Proc): boolean {
    return p.exit === null && recordDescendants(p.rec, this.d.descendants);
  }
}

/** What run.json keeps of a diagnosis (the long explanation and fix are the signature table's). */
function endDiagnosis(d: Diagnosis | null): EndDiagnosis | null {
  return d ? { code: d.code, title: d.title, text: d.text, file: d.file, line: d.line } : null;
}
